// main.cpp: the Catch2 entry point of qwen3_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
