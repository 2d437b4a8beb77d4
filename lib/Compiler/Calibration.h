//===- Calibration.h - running the float model at compile time -*- C++ -*-===//
//
// Static int8 needs the range of every quantized matmul's activations on
// representative data. v4fc gets it the way TensorRT's builder does: it
// compiles the optimized float graph once more with those activations as
// extra outputs ("taps"), loads that artifact into the v4f runtime in this
// process (the same kernels a deployment runs; the runtime stays free of
// LLVM/MLIR, the compiler links it), runs it on every calibration sample
// and reduces the taps to min/max or histograms. The chosen range goes on
// the matmul as `v4f.calibration`, which v4f-quantize turns into a scale and
// zero point. The same runner serves --accuracy-budget's validation runs.
//
//===----------------------------------------------------------------------===//
#ifndef V4F_COMPILER_CALIBRATION_H
#define V4F_COMPILER_CALIBRATION_H

#include "v4f/Transforms/QuantizationMath.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

struct v4f_model_s;
struct v4f_session_s;

namespace v4f {

/// Compiles a (cloned, optimized) graph module for this host into artifact
/// bytes; consumes the module.
using HostArtifactCompiler =
    std::function<bool(mlir::ModuleOp graph, std::vector<uint8_t> &artifact, std::string &error)>;

/// The arrays of a calibration or validation .npz matched to the model's
/// inputs: one sample is a slice along the first axis.
struct SampleSet {
  std::string path;
  struct Input {
    std::string name;
    int32_t dtype = 0;         // V4F_DTYPE_*
    std::vector<int64_t> dims; // one sample's dims (as the model sees them)
    size_t sampleBytes = 0;
    std::vector<uint8_t> data; // all samples
  };
  std::vector<Input> inputs; // in the model's input order
  int64_t samples = 0;
};

/// Reads `path` (np.savez / np.savez_compressed) and checks it against the
/// inputs of @main in `module`: one array per input, named as the input,
/// of its dtype, shaped [samples, ...dims] (or [samples, ...dims[1:]] when
/// the input's first dim is 1 or symbolic), at least one sample, no NaN or
/// infinity. `what` ("calibration", "validation") names the set in errors.
bool loadSampleSet(const std::string &path, mlir::ModuleOp module, const std::string &what, SampleSet &out,
                   std::string &error);

/// An artifact loaded into the v4f runtime in this process.
class InProcessModel {
public:
  InProcessModel();
  ~InProcessModel();
  InProcessModel(const InProcessModel &) = delete;
  InProcessModel &operator=(const InProcessModel &) = delete;
  bool load(std::vector<uint8_t> artifact, std::string &error);
  struct Output {
    int32_t dtype = 0;
    std::vector<int64_t> dims;
    std::vector<uint8_t> data;
    const float *f32() const { return reinterpret_cast<const float *>(data.data()); }
    size_t elements() const;
  };
  /// Runs sample `index` of `set`; `outputs` gets every model output.
  bool run(const SampleSet &set, int64_t index, std::vector<Output> &outputs, std::string &error);

private:
  struct Buffer;
  std::unique_ptr<Buffer> buffer_;
  v4f_model_s *model_ = nullptr;
  v4f_session_s *session_ = nullptr;
};

/// The first ONNX node name in `loc` (a fused op's carries several), or "".
std::string firstNodeName(mlir::Location loc);

/// One calibrated matmul or conv, for --quant-report.
struct CalibratedLayer {
  mlir::Location loc;
  std::string node;
  double min = 0, max = 0; // observed
  float lo = 0, hi = 0;    // chosen range
  /// The layer alone (its float input, its product without bias) on the
  /// first calibration samples: 10 log10(sum y^2 / sum (y - yq)^2) and
  /// max |y - yq|; NaN when not measured (weight not constant, convs).
  double sqnrDb = 0, maxAbsError = 0;
};

/// Runs the float graph `module` on `set` and sets `v4f.calibration` on
/// every top-level v4f.matmul and ungrouped v4f.conv with a float32
/// activation.
bool calibrateActivations(mlir::ModuleOp module, const SampleSet &set, const CalibrationMethod &method, bool perChannel,
                          const HostArtifactCompiler &compile, std::vector<CalibratedLayer> &layers,
                          std::string &error);

} // namespace v4f

#endif // V4F_COMPILER_CALIBRATION_H
