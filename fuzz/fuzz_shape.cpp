// libFuzzer target: the shape program -- its verifier and its evaluator --
// structure-aware. The bytes describe a plan with no dispatches: 1-3 inputs
// (rank, dtype, static or symbolic dims, the shapes given at run time and
// their data), a shape program of up to 256 instructions (every ShapeOp,
// operands and immediates from the bytes), and an output whose dims and
// buffer size are registers of it. The target builds that manifest with
// FlatBuffers, wraps it in a format-5 header and loads it (digests off: the
// bytes are not an artifact v4fc wrote), then resolves the output shape and
// runs the session, so instruction verification, evaluation with overflow,
// division, broadcast and data-reading ops, and the buffer-size checks all
// see fuzzed programs far more often than through the artifact target.

#include "v4f/artifact_format.h"
#include "v4f/artifact_manifest_generated.h"
#include "FuzzCommon.h"
#include "v4f/runtime.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace fb = v4f::fb;

namespace {
struct Reader {
  const uint8_t *p;
  size_t n;
  uint8_t u8() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  uint32_t u16() { return uint32_t(u8()) | uint32_t(u8()) << 8; }
  int64_t imm() {
    uint8_t tag = u8();
    int64_t v = int32_t(uint32_t(u16()) | uint32_t(u16()) << 16);
    if (tag & 0x80) v = int64_t(uint64_t(v) << 32); // reach the overflow paths
    return v;
  }
};

void putU32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, 4); }
void putU64(uint8_t *p, uint64_t v) { std::memcpy(p, &v, 8); }
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader r{data, size};
  const int32_t dtypes[3] = {V4F_DTYPE_FLOAT32, V4F_DTYPE_INT64, V4F_DTYPE_INT32};
  uint32_t nin = 1 + r.u8() % 3;
  struct In {
    int32_t dtype;
    std::vector<int64_t> dims, runDims;
  };
  std::vector<In> ins(nin);
  for (In &in : ins) {
    in.dtype = dtypes[r.u8() % 3];
    uint32_t rank = r.u8() % 5;
    for (uint32_t d = 0; d < rank; ++d) {
      uint8_t b = r.u8();
      in.dims.push_back(b & 0x80 ? -1 : b & 7);
      in.runDims.push_back(b & 0x80 ? (b >> 3) & 15 : b & 7);
    }
  }
  uint32_t nregs = 1 + r.u8();
  std::vector<fb::ShapeInstr> program;
  for (uint32_t i = 0; i < nregs; ++i) {
    uint8_t op = r.u8() % (uint8_t(fb::ShapeOp::MAX) + 1);
    uint32_t a = r.u16() % 300, b = r.u16() % 300;
    program.emplace_back(static_cast<fb::ShapeOp>(op), a, b, r.imm());
  }
  uint32_t outRank = r.u8() % 5;
  std::vector<uint32_t> outRegs;
  for (uint32_t d = 0; d < outRank; ++d) outRegs.push_back(r.u8() % nregs);
  uint32_t outSize = r.u8() % nregs;
  std::vector<uint32_t> inSize;
  for (uint32_t i = 0; i < nin; ++i) inSize.push_back(r.u8() % nregs);

  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::TensorSig>> inSigs, outSigs;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (uint32_t i = 0; i < nin; ++i) {
    std::vector<uint32_t> regs;
    for (size_t d = 0; d < ins[i].dims.size(); ++d) regs.push_back(r.u8() % nregs);
    inSigs.push_back(fb::CreateTensorSig(fbb, fbb.CreateString("in" + std::to_string(i)), ins[i].dtype,
                                         fbb.CreateVector(ins[i].dims), 0, fbb.CreateVector(regs), i));
    buffers.push_back(fb::CreateBuffer(fbb, fb::BufferKind::Input, i, 0, inSize[i]));
  }
  std::vector<int64_t> outDims(outRank, -1);
  outSigs.push_back(fb::CreateTensorSig(fbb, fbb.CreateString("out"), V4F_DTYPE_FLOAT32, fbb.CreateVector(outDims), 0,
                                        fbb.CreateVector(outRegs), nin));
  buffers.push_back(fb::CreateBuffer(fbb, fb::BufferKind::Output, 0, 0, outSize));
  std::vector<std::string> labels = {"Add 'a'", "Mul 'b'"};
  auto manifest =
      fb::CreateManifest(fbb, fbb.CreateString("fuzz"), fbb.CreateString("shape"), 0, 0, fbb.CreateVector(inSigs),
                         fbb.CreateVector(outSigs), fbb.CreateVectorOfStructs(program), fbb.CreateVector(buffers), 0, 0,
                         fbb.CreateVectorOfStrings(labels));
  fb::FinishManifestBuffer(fbb, manifest);

  std::vector<uint8_t> file(sizeof(v4f_file_header_t) + fbb.GetSize(), 0);
  std::memcpy(file.data(), V4F_ARTIFACT_MAGIC, V4F_ARTIFACT_MAGIC_SIZE);
  file[8] = V4F_ARTIFACT_FORMAT_MAJOR;
  putU32(file.data() + 12, sizeof(v4f_file_header_t));
  putU64(file.data() + 16, file.size());
  putU64(file.data() + 24, sizeof(v4f_file_header_t));
  putU64(file.data() + 32, fbb.GetSize());
  putU32(file.data() + V4F_HEADER_OFFSET_DIGEST_ALGORITHM, V4F_DIGEST_ALGORITHM_BLAKE3_TREE);
  std::memcpy(file.data() + sizeof(v4f_file_header_t), fbb.GetBufferPointer(), fbb.GetSize());

  v4f_model_t *model = v4f_fuzz::loadModel(file);
  if (!model) return 0;
  v4f_session_t *session = nullptr;
  v4f_status_t s = v4f_fuzz::createSession(model, uint64_t(64) << 20, &session);
  if (!s) {
    std::vector<v4f_tensor_t> inputs(nin);
    std::vector<std::vector<uint8_t>> bufs(nin);
    for (uint32_t i = 0; i < nin; ++i) {
      v4f_tensor_t &t = inputs[i];
      std::memset(&t, 0, sizeof t);
      t.dtype = ins[i].dtype;
      t.rank = int32_t(ins[i].runDims.size());
      size_t count = 1;
      for (int d = 0; d < t.rank; ++d) count *= size_t(t.dims[d] = ins[i].runDims[d]);
      bufs[i].resize(count * v4f_dtype_size(t.dtype) + 1);
      for (uint8_t &b : bufs[i]) b = r.u8(); // input values: InputValue / InputScaledDim read them
      t.data = bufs[i].data();
      t.byte_size = bufs[i].size() - 1;
    }
    v4f_tensor_t out;
    std::memset(&out, 0, sizeof out);
    if (!(s = v4f_session_resolve_output_shapes(session, inputs.data(), nin, &out, 1)) &&
        out.byte_size <= (size_t(1) << 24)) {
      std::vector<uint8_t> o(out.byte_size + 1);
      out.data = o.data();
      s = v4f_session_run(session, inputs.data(), nin, &out, 1);
    }
  }
  v4f_fuzz::checkStatus(s);
  v4f_status_free(s);
  v4f_session_release(session);
  v4f_model_release(model);
  return 0;
}
