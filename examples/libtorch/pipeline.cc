// feature.onnx -> torch step (LibTorch) -> head.onnx in C++: ONNX Runtime sessions run on torch tensors and hand
// their outputs back to torch through ortdlpack's C++ API, without a copy either way.
//
//   libtorch_pipeline FEATURE.onnx HEAD.onnx        (scripts/make_models.py writes both)
//
//   torch tensor --at::toDLPackVersioned--> ortdlpack::from_dlpack --> ORT feed (same memory)
//   ORT output   --ortdlpack::to_dlpack_versioned--> at::fromDLPackVersioned --> torch tensor (same memory)
//
// Checks the results against the same pipeline with the outputs copied into fresh torch tensors, and that every
// exchange kept the address; exits non-zero otherwise.
// ortdlpack's headers first: their dlpack.h (the official one) is the one both sides use.
#include "ortdlpack/ortdlpack.h"
#include "ortdlpack/session.h"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {

// A torch tensor as an ORT tensor: torch's own DLPack export, then ortdlpack's import (no copy for a contiguous
// tensor; torch's deleter runs once, when ORT's last reference goes).
ortdlpack::Tensor to_ort(const at::Tensor& t) { return ortdlpack::from_dlpack(at::toDLPackVersioned(t)).tensor; }

// An ORT tensor as a torch tensor over the same memory; torch owns a share of ORT's value until it lets go.
at::Tensor to_torch(const ortdlpack::Tensor& t) { return at::fromDLPackVersioned(ortdlpack::to_dlpack_versioned(t)); }

// The demo's step: per-sample normalisation (unbiased std) and ReLU.
at::Tensor torch_step(const at::Tensor& feat) {
  const at::Tensor mean = feat.mean({1}, /*keepdim=*/true);
  const at::Tensor std = feat.std({1}, /*unbiased=*/true, /*keepdim=*/true);
  return at::relu((feat - mean) / (std + 1e-5));
}

struct SessionDeleter {
  void operator()(OrtSession* s) const { ortdlpack::ort().ReleaseSession(s); }
};
using OrtSessionPtr = std::unique_ptr<OrtSession, SessionDeleter>;

OrtSessionPtr open_session(const char* path) {
  const OrtApi& api = ortdlpack::ort();
  OrtSessionOptions* options = nullptr;
  ortdlpack::check(api.CreateSessionOptions(&options));
  std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)> guard(
      options, [](OrtSessionOptions* o) { ortdlpack::ort().ReleaseSessionOptions(o); });
  ortdlpack::check(api.SetIntraOpNumThreads(options, 2));
  OrtSession* session = nullptr;
  ortdlpack::check(api.CreateSession(ortdlpack::env(), path, options, &session));
  return OrtSessionPtr(session);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FEATURE.onnx HEAD.onnx\n", argv[0]);
    return 2;
  }
  try {
    ortdlpack::init(OrtGetApiBase());
    OrtSessionPtr feature_session = open_session(argv[1]);
    OrtSessionPtr head_session = open_session(argv[2]);
    ortdlpack::Session feature(feature_session.get());
    ortdlpack::Session head(head_session.get());

    at::manual_seed(0);
    const at::Tensor images = at::rand({8, 3, 64, 64});
    at::Tensor logits = at::empty({8, 10});  // ORT writes the result here

    // feature: torch images in (read in place), ORT's output out as a torch tensor over ORT's memory.
    const ortdlpack::Tensor x = to_ort(images);
    ortdlpack::Tensor feat_ort = feature.run({{"x", x}}).at(0);
    at::Tensor feat = to_torch(feat_ort);
    // head: the torch step's result in, the logits written straight into the preallocated torch tensor.
    ortdlpack::RunOptions into_logits;
    into_logits.destinations = {{"logits", to_ort(logits)}};
    const ortdlpack::Tensor out = head.run({{"feat", to_ort(torch_step(feat))}}, {"logits"}, into_logits).at(0);

    // The same pipeline with every ORT output copied into a fresh torch tensor: the reference.
    const at::Tensor feat_copy = to_torch(feature.run({{"x", to_ort(images)}}).at(0)).clone();
    const at::Tensor expected = to_torch(head.run({{"feat", to_ort(torch_step(feat_copy))}}).at(0)).clone();

    const bool images_in_place = x.data() == images.data_ptr();
    const bool feat_shared = feat.data_ptr() == feat_ort.data();
    const bool logits_in_place = out.data() == logits.data_ptr();
    const bool equal = at::allclose(logits, expected, 1e-5, 1e-6);
    std::printf("LibTorch (ATen) + ONNX Runtime %s through ortdlpack\n", OrtGetApiBase()->GetVersionString());
    std::printf("  images read in place by ORT:            %s\n", images_in_place ? "yes" : "NO");
    std::printf("  torch tensor over ORT's feature output: %s\n", feat_shared ? "same memory" : "DIFFERENT memory");
    std::printf("  ORT wrote into torch's logits tensor:   %s\n", logits_in_place ? "same memory" : "DIFFERENT memory");
    std::printf("  logits %s the reference (max |diff| %g)\n", equal ? "equal" : "DIFFER FROM",
                (logits - expected).abs().max().item<double>());
    return images_in_place && feat_shared && logits_in_place && equal ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
