// The one placement decision (placement.h) on the host; plugin-device placement is exercised from Python
// (tests/python/test_devices.py) with the virtual device's counters.
#include "ortdlpack/placement.h"

#include "placement_rules.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "ortdlpack/device.h"
#include "ortdlpack/error.h"
#include "ortdlpack/transfer.h"
#include "support.h"

namespace ortdlpack {
namespace {

using test::host_int32_2x3;

using test::kind_of;

TEST(Placement, ATensorAlreadyThereIsItselfUnlessACopyIsAskedFor) {
  const Tensor t = host_int32_2x3();
  for (const Target& target : {Target::anywhere(), Target::host(), Target::on(DLDevice{kDLCPU, 0}),
                               Target::in(t.memory_info()), Target::in(memory_info(DLDevice{kDLCPU, 0}))}) {
    for (CopyMode mode : {CopyMode::kNever, CopyMode::kIfNeeded}) {
      const Placed p = place(t, target, mode, "test");
      EXPECT_FALSE(p.copied);
      EXPECT_EQ(p.tensor.ort_value(), t.ort_value());
      EXPECT_FALSE(copies(t, target, mode, "test"));
    }
    const Placed fresh = place(t, target, CopyMode::kAlways, "test");
    EXPECT_TRUE(fresh.copied);
    EXPECT_NE(fresh.tensor.data(), t.data());
    EXPECT_EQ(std::memcmp(fresh.tensor.data(), t.data(), t.byte_size()), 0);
    EXPECT_EQ(fresh.tensor.shape(), t.shape());
  }
}

// Found by fuzz/fuzz_import.cc: every kDLCPU id names the one CPU memory (memory_info), so a CPU tensor is already
// on kDLCPU 3; comparing ids asked copy=kNever for a copy and made kIfNeeded copy into the same memory (still "not
// there").
TEST(Placement, EveryCpuDeviceIdIsTheCpu) {
  const Tensor t = host_int32_2x3();
  const Target cpu3 = Target::on(DLDevice{kDLCPU, 3});
  EXPECT_TRUE(is_at(t, cpu3));
  for (CopyMode mode : {CopyMode::kNever, CopyMode::kIfNeeded}) {
    const Placed p = place(t, cpu3, mode, "test");
    EXPECT_FALSE(p.copied);
    EXPECT_EQ(p.tensor.ort_value(), t.ort_value());
  }
  EXPECT_TRUE(is_at(place(t, cpu3, CopyMode::kAlways, "test").tensor, cpu3));
}

TEST(Placement, ACopyThatIsNotAllowedIsCopyRequired) {
  const Tensor t = host_int32_2x3();
  // No CUDA here: the decision (a copy is needed) comes before any destination memory is looked up.
  EXPECT_EQ(kind_of([&] { place(t, Target::on(DLDevice{kDLCUDA, 0}), CopyMode::kNever, "test"); }),
            ErrorKind::kCopyRequired);
  EXPECT_EQ(kind_of([&] { copies(t, Target::on(DLDevice{kDLCUDA, 0}), CopyMode::kNever, "test"); }),
            ErrorKind::kCopyRequired);
}

TEST(Placement, ACopyRunsThroughTheRunnerAndOnlyACopy) {
  static int runs = 0;
  runs = 0;
  const CopyRunner count = [](const std::function<void()>& copy) {
    ++runs;
    copy();
  };
  const Tensor t = host_int32_2x3();
  EXPECT_FALSE(place(t, Target::host(), CopyMode::kIfNeeded, "test", nullptr, count).copied);
  EXPECT_EQ(runs, 0);  // no copy: the runner (a binding's lock release) is not called
  const Placed p = place(t, Target::host(), CopyMode::kAlways, "test", nullptr, count);
  EXPECT_TRUE(p.copied);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(std::memcmp(p.tensor.data(), t.data(), t.byte_size()), 0);
}

TEST(Placement, ATargetNamesAMemoryOnlyForADeviceOrAMemory) {
  const OrtMemoryInfo* cpu = memory_info(DLDevice{kDLCPU, 0});
  EXPECT_EQ(named_memory(Target::anywhere()), nullptr);
  EXPECT_EQ(named_memory(Target::host()), nullptr);
  EXPECT_EQ(named_memory(Target::on(DLDevice{kDLCPU, 3})), cpu);
  EXPECT_EQ(named_memory(Target::in(cpu)), cpu);
  EXPECT_EQ(kind_of([] { named_memory(Target::on(DLDevice{static_cast<DLDeviceType>(99), 0})); }),
            ErrorKind::kUnsupported);
}

TEST(Placement, AnEmptyTensorIsAnInvalidArgument) {
  EXPECT_EQ(kind_of([] { place(Tensor(), Target::anywhere(), CopyMode::kIfNeeded, "test"); }),
            ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace ortdlpack
