// ShapeProgramTest.cpp - manifests with value-dependent shapes and scalars.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "TestArtifacts.h"
#include "v4f/artifact_format.h"

using namespace v4f;
using namespace v4f::test;

namespace {

// addScalePlan plus a third input `extra` with the given dtype and dims.
ExecutablePlan planWithExtraInput(int32_t dtype, std::vector<int64_t> dims, std::vector<uint32_t> dimRegs) {
  ExecutablePlan p = addScalePlan();
  TensorSignature s;
  s.name = "extra";
  s.dtype = static_cast<DType>(dtype);
  s.dims = dims;
  s.dimNames = std::vector<std::string>(dims.size(), "");
  s.dimRegs = dimRegs;
  PlanBuffer b;
  b.kind = BufferKind::Input;
  b.index = 2;
  b.sizeReg = 3; // constant 4 bytes
  p.buffers.push_back(b);
  s.buffer = p.buffers.size() - 1;
  p.inputs.push_back(s);
  return p;
}

TEST(ShapeProgram, ScalarSignatureLoads) {
  // Empty 8-byte vectors (the dims of a scalar) are only 4-aligned by
  // FlatBuffers; the loader must still accept them.
  auto file = buildArtifact(planWithExtraInput(V4F_DTYPE_FLOAT32, {}, {}), testKernelLibrary(), addScaleConstants());
  v4f_model_t *model = nullptr;
  v4f_status_t st = v4f_model_load_memory(file.data(), file.size(), nullptr, nullptr, &model);
  ASSERT_EQ(st, nullptr) << v4f_status_message(st);
  v4f_tensor_info_t info;
  ASSERT_EQ(v4f_model_input_info(model, 2, &info), nullptr);
  EXPECT_EQ(info.rank, 0);
  v4f_model_release(model);
}

TEST(ShapeProgram, InputValueMustReadAnIntegerInput) {
  ExecutablePlan p = addScalePlan();
  ShapeInstruction read;
  read.op = ShapeOpKind::InputValue;
  read.a = 0; // input x is float32
  read.b = 0;
  p.shapeProgram.push_back(read);
  auto file = buildArtifact(p, testKernelLibrary(), addScaleConstants());
  expectLoadError(file, "is not an int32/int64 tensor");
}

TEST(ShapeProgram, SelectConditionMustBeDefinedEarlier) {
  ExecutablePlan p = addScalePlan();
  ShapeInstruction sel;
  sel.op = ShapeOpKind::Select;
  sel.a = 0;
  sel.b = 1;
  sel.imm = static_cast<int64_t>(p.shapeProgram.size()); // itself
  p.shapeProgram.push_back(sel);
  auto file = buildArtifact(p, testKernelLibrary(), addScaleConstants());
  expectLoadError(file, "selects on register");
}

TEST(ShapeProgram, InputScaledDimMustReadAFloat32Input) {
  ExecutablePlan p = planWithExtraInput(V4F_DTYPE_INT64, {}, {});
  ShapeInstruction read;
  read.op = ShapeOpKind::InputScaledDim;
  read.a = 2; // `extra` is int64
  read.b = 0;
  read.imm = 1;
  p.shapeProgram.push_back(read);
  auto file = buildArtifact(p, testKernelLibrary(), addScaleConstants());
  expectLoadError(file, "not a float32 tensor");
}

TEST(ShapeProgram, InputScaledDimScalesAnEarlierRegister) {
  ExecutablePlan p = planWithExtraInput(V4F_DTYPE_FLOAT32, {}, {});
  ShapeInstruction read;
  read.op = ShapeOpKind::InputScaledDim;
  read.a = 2;
  read.b = 0;
  read.imm = static_cast<int64_t>(p.shapeProgram.size()); // itself
  p.shapeProgram.push_back(read);
  auto file = buildArtifact(p, testKernelLibrary(), addScaleConstants());
  expectLoadError(file, "scales register");
}

TEST(ShapeProgram, DataValueMustReadATransientBuffer) {
  ExecutablePlan p = addScalePlan();
  ShapeInstruction read;
  read.op = ShapeOpKind::DataValue;
  read.a = 0; // an input buffer
  read.b = 0;
  read.imm = 1;
  p.shapeProgram.push_back(read);
  auto file = buildArtifact(p, testKernelLibrary(), addScaleConstants());
  expectLoadError(file, "is not a transient buffer");
}

TEST(ShapeProgram, DataValueBufferMustHoldTheElement) {
  ExecutablePlan p = addScalePlan();
  ShapeInstruction read;
  read.op = ShapeOpKind::DataValue;
  read.a = 2; // the transient buffer, sized n*4 bytes (not a constant)
  read.b = 0;
  read.imm = 1;
  p.shapeProgram.push_back(read);
  auto file = buildArtifact(p, testKernelLibrary(), addScaleConstants());
  expectLoadError(file, "does not have a constant size");
  // A constant 8-byte buffer holds element 0 but not element 1.
  p.buffers[2].sizeReg = 6; // constant 8
  p.shapeProgram.back().b = 1;
  expectLoadError(buildArtifact(p, testKernelLibrary(), addScaleConstants()), "does not have a constant size");
  p.shapeProgram.back().b = 0;
  p.shapeProgram.back().imm = static_cast<int64_t>(p.shapeProgram.size()); // itself
  expectLoadError(buildArtifact(p, testKernelLibrary(), addScaleConstants()), "bounds by register");
}

} // namespace
