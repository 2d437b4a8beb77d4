// Auth.cpp - token file, hashing (OpenSSL SHA-256) and token creation.
#include "Auth.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace v4f::serve {

using nlohmann::json;

namespace {
std::string toHex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += d[c >> 4], out += d[c & 15];
  return out;
}

bool fromHex(const std::string& hex, std::string* out) {
  if (hex.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

std::string sha256(const std::string& salt, const std::string& token) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx, salt.data(), salt.size()) == 1 &&
            EVP_DigestUpdate(ctx, token.data(), token.size()) == 1 && EVP_DigestFinal_ex(ctx, md, &n) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) throw std::runtime_error("SHA-256 failed (OpenSSL)");
  return std::string(reinterpret_cast<char*>(md), n);
}

std::string randomBytes(size_t n) {
  std::string b(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(b.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("cannot get random bytes (OpenSSL RAND_bytes)");
  return b;
}

bool validId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  return true;
}

unsigned parseRole(const std::string& r) {
  if (r == "infer") return kRoleInfer;
  if (r == "metadata") return kRoleMetadata;
  if (r == "admin") return kRoleAdmin;
  return 0;
}

std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}
} // namespace

const char* roleName(Role role) {
  switch (role) {
  case kRoleInfer: return "infer";
  case kRoleMetadata: return "metadata";
  case kRoleAdmin: return "admin";
  }
  return "?";
}

bool Principal::allowsModel(const std::string& model) const {
  for (const auto& m : models)
    if (m == "*" || m == model) return true;
  return false;
}

TokenStore TokenStore::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("token file '" + path + "': cannot be read");
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error("token file '" + path + "': not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array())
    throw std::runtime_error("token file '" + path + "': expected {\"tokens\": [...]}");
  TokenStore store;
  size_t index = 0;
  for (const json& t : j["tokens"]) {
    std::string where = "token file '" + path + "': entry " + std::to_string(index++);
    if (!t.is_object() || !t.contains("id") || !t["id"].is_string())
      throw std::runtime_error(where + ": no \"id\" string");
    Entry e;
    e.principal.id = t["id"].get<std::string>();
    where += " ('" + e.principal.id + "')";
    if (!validId(e.principal.id)) throw std::runtime_error(where + ": the id must be 1-64 of [A-Za-z0-9_-]");
    if (store.entries_.count(e.principal.id)) throw std::runtime_error(where + ": the id appears twice");
    if (!t.contains("salt") || !t["salt"].is_string() || !fromHex(t["salt"].get<std::string>(), &e.salt) ||
        e.salt.size() < 16)
      throw std::runtime_error(where + ": \"salt\" must be at least 16 bytes in hex");
    if (!t.contains("sha256") || !t["sha256"].is_string() || !fromHex(t["sha256"].get<std::string>(), &e.digest) ||
        e.digest.size() != 32)
      throw std::runtime_error(where + ": \"sha256\" must be 32 bytes in hex");
    if (!t.contains("roles") || !t["roles"].is_array())
      throw std::runtime_error(where + ": \"roles\" must be an array");
    for (const json& r : t["roles"]) {
      unsigned bit = r.is_string() ? parseRole(r.get<std::string>()) : 0;
      if (!bit) throw std::runtime_error(where + ": unknown role " + r.dump() + " (infer, metadata, admin)");
      e.principal.roles |= bit;
    }
    if (!t.contains("models") || !t["models"].is_array())
      throw std::runtime_error(where + ": \"models\" must be an array of model names or \"*\"");
    for (const json& m : t["models"]) {
      if (!m.is_string()) throw std::runtime_error(where + ": \"models\" holds a non-string");
      e.principal.models.push_back(m.get<std::string>());
    }
    store.entries_.emplace(e.principal.id, std::move(e));
  }
  return store;
}

const Principal* TokenStore::authenticate(const std::string& token) const {
  size_t dot = token.find('.');
  if (dot == std::string::npos || token.size() > 512) return nullptr;
  auto it = entries_.find(token.substr(0, dot));
  if (it == entries_.end()) return nullptr;
  std::string digest = sha256(it->second.salt, token);
  if (CRYPTO_memcmp(digest.data(), it->second.digest.data(), digest.size()) != 0) return nullptr;
  return &it->second.principal;
}

std::string addToken(const std::string& path, const std::string& id, const std::string& roles,
                     const std::string& models) {
  if (!validId(id)) throw std::runtime_error("token id '" + id + "': must be 1-64 of [A-Za-z0-9_-]");
  json entry = {{"id", id}, {"roles", json::array()}, {"models", json::array()}};
  for (const auto& r : splitComma(roles)) {
    if (!parseRole(r)) throw std::runtime_error("unknown role '" + r + "' (infer, metadata, admin)");
    entry["roles"].push_back(r);
  }
  if (entry["roles"].empty()) throw std::runtime_error("a token needs at least one role");
  for (const auto& m : splitComma(models)) entry["models"].push_back(m);
  if (entry["models"].empty()) throw std::runtime_error("a token needs --models (names, or '*' for all)");

  json file = {{"tokens", json::array()}};
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    std::ifstream in(path);
    try {
      file = json::parse(in);
    } catch (const std::exception& e) {
      throw std::runtime_error("token file '" + path + "': not valid JSON: " + e.what());
    }
    if (!file.is_object() || !file.contains("tokens") || !file["tokens"].is_array())
      throw std::runtime_error("token file '" + path + "': expected {\"tokens\": [...]}");
    for (const json& t : file["tokens"])
      if (t.is_object() && t.value("id", "") == id)
        throw std::runtime_error("token file '" + path + "': id '" + id + "' already exists");
  }
  std::string token = id + "." + toHex(randomBytes(32));
  std::string salt = randomBytes(16);
  entry["salt"] = toHex(salt);
  entry["sha256"] = toHex(sha256(salt, token));
  file["tokens"].push_back(entry);

  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("token file '" + tmp + "': cannot be created: " + strerror(errno));
  std::string text = file.dump(2) + "\n";
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    throw std::runtime_error("token file '" + path + "': cannot be written: " + strerror(errno));
  }
  return token;
}

} // namespace v4f::serve
