//===- QuantReport.h - quantization candidates and --quant-report -*- C++ -*-===//
#ifndef V4F_LIB_COMPILER_QUANTREPORT_H
#define V4F_LIB_COMPILER_QUANTREPORT_H

#include "Calibration.h"
#include "MixedPrecision.h"

#include "v4f/Compiler/Compiler.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace v4f {

/// The matmuls and convs v4f-quantize would quantize (constant float32
/// weight, float32 activation, not --exclude'd, calibrated for int8), most
/// sensitive first: by the layer's measured SQNR (static int8) or its
/// weight's quantization SQNR.
std::vector<QuantCandidate> rankQuantCandidates(mlir::ModuleOp module, const std::string &mode,
                                                const CompilerOptions &options, int64_t groupSize,
                                                const std::vector<CalibratedLayer> &layers);

/// --quant-report (JSON): the mode, the calibration and the accuracy budget
/// when given, then one entry per matmul and conv after v4f-quantize, in
/// graph order, and a summary.
std::string quantReport(mlir::ModuleOp module, const CompilerOptions &options, const SampleSet *calibration,
                        const std::vector<CalibratedLayer> &layers, const MixedPrecisionResult *mixed);

} // namespace v4f

#endif // V4F_LIB_COMPILER_QUANTREPORT_H
