// Internal: installed EP packages (onnxruntime-ep-*, and the distributions the EP table names), through a finder the
// embedding application installs: the core reads no package metadata itself (the Python extension's finder reads the
// installed distributions' files; a C++ application without one registers EP libraries from ORT's folder only).
#pragma once

#include <string>
#include <vector>

#include "ep_table.h"

namespace ortdlpack {

// An installed EP package, as its installer wrote it: its version, its folder (where its files are), the library it
// brings and the EP names it registers.
struct EpPackage {
  std::string distribution;
  std::string version;
  std::string folder;
  std::string library;
  std::vector<std::string> ep_names;
};

// Lists the installed EP packages of one distribution ("onnxruntime-ep-webgpu"), or of every distribution that
// follows the onnxruntime-ep-<name> convention when `distribution` is "". The core calls it without holding any
// lock of its own; it must not throw (an unreadable package is left out).
using EpPackageFinder = std::vector<EpPackage> (*)(const std::string& distribution);

// Installs the finder ensure_ep() asks for EP packages (none by default: then only ORT's folder is searched).
// Thread-safe.
void set_ep_package_finder(EpPackageFinder finder);

// Every installed EP package the finder reports: the EP table's distributions (onnxruntime-qnn, ...) and every
// onnxruntime-ep-* one, each once. Registers nothing (show_config lists them).
std::vector<EpPackage> installed_ep_packages();

// The installed packages that may bring `ep` (a row: its own distributions, else any onnxruntime-ep-* package
// declaring its EP) or, for a name no row has (`ep` NULL), any package named for `name` or declaring it.
std::vector<EpPackage> packages_for(const detail::EpRow* ep, const std::string& name);

// The distribution an EP package of short name `name` would have ("webgpu" -> "onnxruntime-ep-webgpu").
std::string package_for(const std::string& name);

// Whether package `p` registers an EP named `ep_name`.
bool brings(const EpPackage& p, const std::string& ep_name);

}  // namespace ortdlpack
