// Auth.h - bearer-token access control. The token file holds, per token, an
// id, a random salt and SHA-256(salt || token) -- never the token -- plus
// the token's roles and the models it may use. A token reads "<id>.<secret>"
// so the server finds the one entry to check without trying them all.
#ifndef V4F_SERVE_AUTH_H_
#define V4F_SERVE_AUTH_H_

#include <map>
#include <string>
#include <vector>

namespace v4f::serve {

enum Role : unsigned { kRoleInfer = 1, kRoleMetadata = 2, kRoleAdmin = 4 };

// "infer", "metadata" or "admin" (the name of the role a request needs).
const char* roleName(Role role);

struct Principal {
  std::string id;
  unsigned roles = 0;
  std::vector<std::string> models; // "*" = every model
  bool hasRole(Role r) const { return (roles & r) != 0; }
  bool allowsModel(const std::string& model) const;
};

class TokenStore {
public:
  // Reads and checks the token file; throws std::runtime_error naming the
  // file and the entry on any problem.
  static TokenStore load(const std::string& path);
  // The principal of an "Authorization: Bearer <token>" value's token, or
  // nullptr when it matches no entry (constant-time comparison).
  const Principal* authenticate(const std::string& token) const;
  size_t size() const { return entries_.size(); }

private:
  struct Entry {
    Principal principal;
    std::string salt;   // raw bytes
    std::string digest; // raw SHA-256
  };
  std::map<std::string, Entry> entries_;
};

// Creates a token for `id` with `roles` ("infer,metadata") and `models`
// ("*" or "a,b"), adds its salted hash to the token file (created 0600 if
// missing; rewritten atomically), and returns the token. Throws
// std::runtime_error on a bad id/role or an unwritable file.
std::string addToken(const std::string& path, const std::string& id, const std::string& roles,
                     const std::string& models);

} // namespace v4f::serve

#endif // V4F_SERVE_AUTH_H_
