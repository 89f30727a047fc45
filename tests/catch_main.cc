// The Catch2 main lives in its own translation unit: it is slow to compile, so it is built once.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
