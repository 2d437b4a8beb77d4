//===- Sign.h - v4fc keygen / sign / verify ---------------------*- C++ -*-===//
#ifndef V4F_TOOLS_V4FC_SIGN_H
#define V4F_TOOLS_V4FC_SIGN_H

#include <cstdint>
#include <string>
#include <vector>

namespace v4f {

/// Reads a whole regular file (refusing FIFOs, devices, directories).
bool readArtifact(const std::string &path, std::vector<uint8_t> &bytes, std::string &error);
/// v4fc keygen --out KEY: KEY (secret, 0600) and KEY.pub; prints the public key.
int runKeygen(const std::string &out);
/// v4fc keygen --type encryption --out KEY: a random 32-byte key (0600).
int runKeygenEncryption(const std::string &out);
/// v4fc sign A.v4f --key KEY [-o OUT]: signs in place (atomically) or into OUT.
int runSign(const std::string &artifact, const std::string &key, const std::string &output);
/// v4fc verify A.v4f [--pubkey PUB]: 0 when signed (by PUB when given), else 1.
int runVerify(const std::string &artifact, const std::string &pubkey);

} // namespace v4f

#endif // V4F_TOOLS_V4FC_SIGN_H
