#include <gtest/gtest.h>

#include "support.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ortdlpack::test::OrtEnvironment());
  return RUN_ALL_TESTS();
}
