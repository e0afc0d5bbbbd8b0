// version.h: tessera's version, part of every cache key.
#pragma once

#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 1
#define TESSERA_VERSION_PATCH 0
#define TESSERA_VERSION_STRING "0.1.0"
