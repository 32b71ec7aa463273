// Installed EP packages through the embedding application's finder (ep_packages.h).
#include "ep_packages.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ortdlpack {
namespace {

std::mutex g_mutex;
EpPackageFinder g_finder = nullptr;

EpPackageFinder finder() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_finder;
}

}  // namespace

void set_ep_package_finder(EpPackageFinder f) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_finder = f;
}

std::string package_for(const std::string& name) {
  std::string d = "onnxruntime-ep-";
  for (char c : name) d += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return d;
}

bool brings(const EpPackage& p, const std::string& ep_name) {
  return std::find(p.ep_names.begin(), p.ep_names.end(), ep_name) != p.ep_names.end();
}

std::vector<EpPackage> packages_for(const detail::EpRow* ep, const std::string& name) {
  const EpPackageFinder find = finder();  // asked outside every lock of ours
  std::vector<EpPackage> found;
  if (find == nullptr) return found;
  if (ep != nullptr) {
    for (const char* d : ep->packages) {
      if (d == nullptr) break;
      for (EpPackage& p : find(d)) found.push_back(std::move(p));
    }
    if (!found.empty()) return found;
  }
  const std::string wanted = ep != nullptr ? ep->ep_name : name;
  for (EpPackage& p : find("")) {
    if (brings(p, wanted) || (ep == nullptr && p.distribution == package_for(name))) found.push_back(std::move(p));
  }
  return found;
}

std::vector<EpPackage> installed_ep_packages() {
  const EpPackageFinder find = finder();
  std::vector<EpPackage> found;
  if (find == nullptr) return found;
  const auto add = [&found](std::vector<EpPackage> packages) {
    for (EpPackage& p : packages) {
      const bool listed = std::any_of(found.begin(), found.end(),
                                      [&p](const EpPackage& q) { return q.distribution == p.distribution; });
      if (!listed) found.push_back(std::move(p));
    }
  };
  for (const detail::EpRow& ep : detail::ep_table()) {
    for (const char* d : ep.packages) {
      if (d != nullptr) add(find(d));
    }
  }
  add(find(""));
  return found;
}

}  // namespace ortdlpack
