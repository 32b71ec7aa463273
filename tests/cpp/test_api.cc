// init(), check() and env(): the one boundary where ORT statuses become ortdlpack::Error.
#include "ortdlpack/api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ort.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

// An ORT that knows no API version at all (what a too-old ORT looks like to init()).
const OrtApi* no_api(uint32_t) noexcept { return nullptr; }
const char* no_version() noexcept { return "0.0.0-test"; }
const OrtApiBase kForeignBase{no_api, no_version};

ErrorKind kind_of(OrtErrorCode code) {
  try {
    check(ort().CreateStatus(code, "from the test"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("from the test"), std::string::npos) << e.what();
    return e.kind();
  }
  ADD_FAILURE() << "check() did not throw";
  return ErrorKind::kInvalidArgument;
}

TEST(Api, InitRejectsNullAndASecondOrt) {
  EXPECT_THROW(init(nullptr), Error);
  try {
    init(&kForeignBase);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("one ORT per process"), std::string::npos) << e.what();
  }
  init(OrtGetApiBase());  // the same ORT again: a no-op
  EXPECT_GE(ort_api_version(), kMinOrtApiVersion);
  EXPECT_LE(ort_api_version(), static_cast<uint32_t>(ORT_API_VERSION));
  // The version asked for is the runtime's own (1.N serves API N), capped at the headers': not a downward probe.
  const std::string runtime = OrtGetApiBase()->GetVersionString();
  const uint32_t minor = static_cast<uint32_t>(std::stoul(runtime.substr(runtime.find('.') + 1)));
  EXPECT_EQ(ort_api_version(), std::min<uint32_t>(minor, ORT_API_VERSION)) << runtime;
}

TEST(Api, CheckTurnsStatusesIntoErrors) {
  check(nullptr);  // success: nothing thrown
  EXPECT_EQ(kind_of(ORT_FAIL), ErrorKind::kRuntime);
  EXPECT_EQ(kind_of(ORT_INVALID_ARGUMENT), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of(ORT_NO_SUCHFILE), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of(ORT_NOT_IMPLEMENTED), ErrorKind::kUnsupported);
  EXPECT_EQ(kind_of(ORT_EP_FAIL), ErrorKind::kRuntime);
  try {  // ORT's code travels with the error, through context added where it is rethrown
    detail::check(ort().CreateStatus(ORT_NO_SUCHFILE, "gone"), "loading");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.ort_code(), ORT_NO_SUCHFILE);
    EXPECT_EQ(std::string(e.what()), "loading: gone");
  }
  EXPECT_EQ(Error(ErrorKind::kRuntime, "ortdlpack's own").ort_code(), ORT_OK);
}

TEST(Api, EnvIsTheProcessWideOne) {
  OrtEnv* mine = nullptr;
  check(ort().CreateEnv(ORT_LOGGING_LEVEL_WARNING, "test", &mine));  // ORT answers with the existing env
  EXPECT_EQ(mine, env());
  ort().ReleaseEnv(mine);
}

}  // namespace
}  // namespace ortdlpack
