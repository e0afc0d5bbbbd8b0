// main.cpp: the Catch2 entry point shared by all unit test files.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
