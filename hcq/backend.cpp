#include "hcq/backend.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <stdexcept>

namespace doorbell {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, Backend, std::less<>> backends;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: registrations run before main, devices live until exit
  return *r;
}

bool valid_word(std::string_view w, bool first_alpha) {
  if (w.empty()) return false;
  if (first_alpha && !std::isalpha(static_cast<unsigned char>(w[0]))) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); });
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string DeviceName::canonical() const {
  std::string s = prefix;
  if (index != 0) s += ":" + std::to_string(index);
  const Backend* b = find_backend(prefix);
  if (!renderer.empty() && !(b && !b->renderers.empty() && b->renderers.front() == renderer)) s += ":" + renderer;
  return s;
}

bool register_backend(Backend backend) {
  if (!valid_word(backend.prefix, true))
    throw std::invalid_argument("register_backend: prefix '" + backend.prefix + "'; expected upper-case letters and digits, starting with a letter");
  if (!backend.open) throw std::invalid_argument("register_backend: backend " + backend.prefix + " has no open function");
  for (const std::string& r : backend.renderers)
    if (!valid_word(r, true)) throw std::invalid_argument("register_backend: backend " + backend.prefix + " renderer '" + r + "'; expected upper case");
  std::lock_guard lock(registry().mu);
  std::string prefix = backend.prefix;
  if (!registry().backends.emplace(prefix, std::move(backend)).second)
    throw std::invalid_argument("register_backend: a backend named " + prefix + " is registered already");
  return true;
}

std::vector<std::string> backend_prefixes() {
  std::lock_guard lock(registry().mu);
  std::vector<std::string> out;
  for (const auto& [prefix, b] : registry().backends) out.push_back(prefix);
  return out;
}

const Backend* find_backend(std::string_view prefix) {
  std::lock_guard lock(registry().mu);
  auto it = registry().backends.find(prefix);
  return it == registry().backends.end() ? nullptr : &it->second;  // entries are never erased: the pointer stays valid
}

DeviceName parse_device_name(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t colon = upper.find(':', start);
    parts.push_back(upper.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  auto bad = [&](const std::string& why) -> std::invalid_argument {
    return std::invalid_argument("device '" + std::string(text) + "': " + why +
                                 "; expected PREFIX[:INDEX][:RENDERER] with PREFIX one of " + joined(backend_prefixes()));
  };
  if (parts.size() > 3 || !valid_word(parts[0], true)) throw bad("not a device name");
  DeviceName name;
  name.prefix = parts[0];
  const Backend* backend = find_backend(name.prefix);
  if (!backend) throw bad("no backend named " + name.prefix);
  for (size_t i = 1; i < parts.size(); i++) {
    const std::string& p = parts[i];
    if (!p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      if (i != 1) throw bad("the index comes before the renderer");
      if (p.size() > 6) throw bad("index " + p + " is too large");
      name.index = std::stoi(p);
    } else {
      if (!valid_word(p, true) || i != parts.size() - 1) throw bad("'" + p + "' is neither an index nor a renderer");
      name.renderer = p;
    }
  }
  if (name.renderer.empty()) {
    if (!backend->renderers.empty()) name.renderer = backend->renderers.front();
  } else if (std::find(backend->renderers.begin(), backend->renderers.end(), name.renderer) == backend->renderers.end()) {
    throw std::invalid_argument("device '" + std::string(text) + "': the " + name.prefix + " backend has no renderer " + name.renderer +
                                (backend->renderers.empty() ? std::string("; it takes no renderer suffix")
                                                            : "; expected one of " + joined(backend->renderers)));
  }
  return name;
}

}  // namespace doorbell
