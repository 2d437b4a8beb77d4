//===- Calibration.cpp - running the float model at compile time ----------===//
#include "Calibration.h"

#include "v4f/Support/Npz.h"
#include "v4f/Dialect/V4F/IR/V4FOps.h"
#include "v4f/Dialect/V4F/Utils/ConstantValues.h"
#include "v4f/Transforms/Passes.h"
#include "v4f/artifact_format.h"
#include "v4f/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

using namespace mlir;

namespace v4f {

namespace {

std::string shapeText(llvm::ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + "]";
}

int32_t dtypeOfType(Type t) {
  if (t.isF32()) return V4F_DTYPE_FLOAT32;
  if (t.isF16()) return V4F_DTYPE_FLOAT16;
  if (t.isF64()) return V4F_DTYPE_FLOAT64;
  if (auto i = llvm::dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 1: return V4F_DTYPE_BOOL;
    case 8: return u ? V4F_DTYPE_UINT8 : V4F_DTYPE_INT8;
    case 16: return u ? V4F_DTYPE_UINT16 : V4F_DTYPE_INT16;
    case 32: return u ? V4F_DTYPE_UINT32 : V4F_DTYPE_INT32;
    case 64: return u ? V4F_DTYPE_UINT64 : V4F_DTYPE_INT64;
    }
  }
  return 0;
}

func::FuncOp mainOf(ModuleOp module) { return module.lookupSymbol<func::FuncOp>("main"); }

/// The ops v4f-insert-calibration-taps marked, in tap order.
SmallVector<Operation *> tappedOps(func::FuncOp func) {
  SmallVector<Operation *> out;
  for (Operation &op : func.getBody().front())
    if (op.hasAttr(kCalibrationTapAttr)) out.push_back(&op);
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Sample sets
//===----------------------------------------------------------------------===//

bool loadSampleSet(const std::string &path, ModuleOp module, const std::string &what, SampleSet &out,
                   std::string &error) {
  out = SampleSet();
  out.path = path;
  func::FuncOp func = mainOf(module);
  if (!func) {
    error = "internal: the module has no @main";
    return false;
  }
  std::vector<std::pair<std::string, v4frun::NpyArray>> arrays;
  if (!v4frun::readNpz(path, arrays, error)) {
    error = "--" + what + "-data " + error;
    return false;
  }
  auto fail = [&](const std::string &why) {
    error = path + " (" + what + " data): " + why;
    return false;
  };
  std::vector<std::string> inputNames;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "v4f.name");
    inputNames.push_back(name ? name.str() : "input" + std::to_string(i));
  }
  auto list = [](const std::vector<std::string> &names) {
    std::string s;
    for (const auto &n : names) s += (s.empty() ? "'" : ", '") + n + "'";
    return s.empty() ? std::string("none") : s;
  };
  std::vector<std::string> arrayNames;
  for (auto &a : arrays) arrayNames.push_back(a.first);
  for (auto &a : arrays)
    if (!llvm::is_contained(inputNames, a.first))
      return fail("array '" + a.first + "' names no input of the model (its inputs: " + list(inputNames) + ")");
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    const std::string &name = inputNames[i];
    auto it = std::find_if(arrays.begin(), arrays.end(), [&](auto &a) { return a.first == name; });
    if (it == arrays.end())
      return fail("no array for model input '" + name + "' (the file holds " + list(arrayNames) + ")");
    v4frun::NpyArray &a = it->second;
    auto type = llvm::cast<RankedTensorType>(func.getArgument(i).getType());
    int32_t dtype = dtypeOfType(type.getElementType());
    if (a.dtype != dtype)
      return fail("array '" + name + "' is " + v4f_dtype_name(a.dtype) + "; model input '" + name + "' is " +
                  v4f_dtype_name(dtype));
    std::vector<int64_t> inDims(type.getShape().begin(), type.getShape().end());
    for (int64_t &d : inDims)
      if (ShapedType::isDynamic(d)) d = -1;
    SampleSet::Input in;
    in.name = name;
    in.dtype = dtype;
    size_t rank = inDims.size();
    if (a.shape.size() == rank + 1) {
      in.dims.assign(a.shape.begin() + 1, a.shape.end());
    } else if (a.shape.size() == rank && rank > 0 && (inDims[0] == 1 || inDims[0] == -1)) {
      in.dims = a.shape;
      in.dims[0] = 1;
    } else {
      std::string expect = "[samples" + (rank ? ", " + shapeText(inDims).substr(1) : std::string("]"));
      return fail("array '" + name + "' has shape " + shapeText(a.shape) + "; model input '" + name + "' is " +
                  shapeText(inDims) + ", so the array must be " + expect + " (first axis = samples)");
    }
    for (size_t d = 0; d < rank; ++d)
      if (inDims[d] >= 0 && in.dims[d] != inDims[d])
        return fail("array '" + name + "': a sample has shape " + shapeText(in.dims) + "; model input '" + name +
                    "' is " + shapeText(inDims) + " (dim " + std::to_string(d) + " differs)");
    int64_t samples = a.shape.empty() ? 0 : a.shape[0];
    if (samples == 0) return fail("the " + what + " set is empty (array '" + name + "' has 0 samples)");
    if (i > 0 && samples != out.samples)
      return fail("array '" + name + "' has " + std::to_string(samples) + " samples, array '" + out.inputs[0].name +
                  "' " + std::to_string(out.samples) + " (all arrays need the same count)");
    out.samples = samples;
    in.sampleBytes = a.data.size() / size_t(samples);
    in.data = std::move(a.data);
    auto badAt = [&](size_t k) {
      return fail("array '" + name + "' holds NaN or infinity (sample " +
                  std::to_string(k / (in.sampleBytes / v4f_dtype_size(dtype))) + ")");
    };
    if (dtype == V4F_DTYPE_FLOAT32) {
      const float *p = reinterpret_cast<const float *>(in.data.data());
      for (size_t k = 0; k < in.data.size() / 4; ++k)
        if (!std::isfinite(p[k])) return badAt(k);
    } else if (dtype == V4F_DTYPE_FLOAT64) {
      const double *p = reinterpret_cast<const double *>(in.data.data());
      for (size_t k = 0; k < in.data.size() / 8; ++k)
        if (!std::isfinite(p[k])) return badAt(k);
    }
    out.inputs.push_back(std::move(in));
  }
  if (out.inputs.empty()) return fail("the model has no inputs to feed");
  return true;
}

//===----------------------------------------------------------------------===//
// InProcessModel
//===----------------------------------------------------------------------===//

struct InProcessModel::Buffer {
  void *data = nullptr;
  ~Buffer() { std::free(data); }
};

InProcessModel::InProcessModel() = default;

InProcessModel::~InProcessModel() {
  v4f_session_release(session_);
  v4f_model_release(model_);
}

size_t InProcessModel::Output::elements() const {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return n;
}

namespace {
bool takeStatus(v4f_status_t status, const std::string &what, std::string &error) {
  if (!status) return true;
  error = what + ": " + v4f_status_message(status);
  v4f_status_free(status);
  return false;
}
} // namespace

bool InProcessModel::load(std::vector<uint8_t> artifact, std::string &error) {
  buffer_ = std::make_unique<Buffer>();
  size_t size = (artifact.size() + 63) / 64 * 64;
  buffer_->data = std::aligned_alloc(64, size ? size : 64);
  if (!buffer_->data) {
    error = "out of memory for the calibration artifact";
    return false;
  }
  std::memcpy(buffer_->data, artifact.data(), artifact.size());
  v4f_model_options_t options;
  v4f_model_options_init(&options);
  options.verify_digests = 0; // made a moment ago in this process
  if (!takeStatus(v4f_model_load_memory(buffer_->data, artifact.size(), &options, nullptr, &model_),
                  "loading the in-process artifact", error))
    return false;
  return takeStatus(v4f_session_create(model_, nullptr, nullptr, &session_), "creating a session", error);
}

bool InProcessModel::run(const SampleSet &set, int64_t index, std::vector<Output> &outputs, std::string &error) {
  std::vector<v4f_tensor_t> inputs(set.inputs.size());
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    const SampleSet::Input &in = set.inputs[i];
    v4f_tensor_t &t = inputs[i];
    std::memset(&t, 0, sizeof t);
    t.data = const_cast<uint8_t *>(in.data.data() + size_t(index) * in.sampleBytes);
    t.byte_size = in.sampleBytes;
    t.dtype = in.dtype;
    t.rank = int32_t(in.dims.size());
    for (size_t d = 0; d < in.dims.size(); ++d) t.dims[d] = in.dims[d];
  }
  size_t count = v4f_model_output_count(model_);
  std::vector<v4f_tensor_t> outs(count);
  std::memset(outs.data(), 0, count * sizeof(v4f_tensor_t));
  std::string what = "running sample " + std::to_string(index) + " of " + set.path;
  if (!takeStatus(v4f_session_resolve_output_shapes(session_, inputs.data(), inputs.size(), outs.data(), count), what,
                  error))
    return false;
  outputs.resize(count);
  for (size_t i = 0; i < count; ++i) {
    outputs[i].data.resize(outs[i].byte_size);
    outs[i].data = outputs[i].data.data();
  }
  if (!takeStatus(v4f_session_run(session_, inputs.data(), inputs.size(), outs.data(), count), what, error))
    return false;
  for (size_t i = 0; i < count; ++i) {
    outputs[i].dtype = outs[i].dtype;
    outputs[i].dims.assign(outs[i].dims, outs[i].dims + outs[i].rank);
    outputs[i].data.resize(outputs[i].elements() * v4f_dtype_size(outs[i].dtype));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Calibration
//===----------------------------------------------------------------------===//

namespace {

/// How many samples' activations are kept to measure each layer's error.
constexpr int64_t kErrorSamples = 4;
constexpr size_t kErrorRows = 512;

struct TapStats {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  std::vector<uint64_t> valueHist, absHist;
  std::vector<float> kept; // rows of the first samples, for the error
  int64_t K = 0;
};

void histogram(const float *x, size_t n, double lo, double hi, std::vector<uint64_t> &hist) {
  if (!(hi > lo)) return;
  double scale = double(hist.size()) / (hi - lo);
  int last = int(hist.size()) - 1;
  for (size_t i = 0; i < n; ++i) {
    int b = int((double(x[i]) - lo) * scale);
    hist[size_t(std::clamp(b, 0, last))]++;
  }
}

void absHistogram(const float *x, size_t n, double amax, std::vector<uint64_t> &hist) {
  if (!(amax > 0)) return;
  double scale = double(hist.size()) / amax;
  int last = int(hist.size()) - 1;
  for (size_t i = 0; i < n; ++i) {
    int b = int(std::fabs(double(x[i])) * scale);
    hist[size_t(std::clamp(b, 0, last))]++;
  }
}

/// The layer's error in isolation: its float activation rows `x` (rows x K)
/// through the float weight vs quantized activation and weight.
void measureLayer(const std::vector<float> &x, int64_t K, DenseElementsAttr weight, int64_t N, float lo, float hi,
                  bool perChannel, CalibratedLayer &layer) {
  std::vector<float> w = floatValues(weight);
  std::vector<int8_t> qw;
  std::vector<float> ws;
  quantizeWeightColumns(w.data(), K, N, perChannel, qw, ws);
  ActivationQuant aq = activationQuantFromRange(lo, hi);
  size_t rows = x.size() / size_t(K);
  std::vector<double> xq(static_cast<size_t>(K));
  float inv = 1.f / aq.scale; // as the kernel: a * (1 / s)
  double signal = 0, noise = 0, maxErr = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x.data() + r * size_t(K);
    for (int64_t k = 0; k < K; ++k) {
      float q = std::clamp(std::nearbyint(xr[k] * inv) + float(aq.zeroPoint), -128.f, 127.f);
      xq[k] = double(q - float(aq.zeroPoint)) * aq.scale;
    }
    for (int64_t n = 0; n < N; ++n) {
      double y = 0, yq = 0;
      for (int64_t k = 0; k < K; ++k) {
        y += double(xr[k]) * w[k * N + n];
        yq += xq[k] * (double(qw[k * N + n]) * ws[n]);
      }
      signal += y * y;
      noise += (y - yq) * (y - yq);
      maxErr = std::max(maxErr, std::fabs(y - yq));
    }
  }
  layer.sqnrDb = noise > 0 ? 10 * std::log10(signal / noise) : std::numeric_limits<double>::infinity();
  layer.maxAbsError = maxErr;
}

} // namespace

bool calibrateActivations(ModuleOp module, const SampleSet &set, const CalibrationMethod &method, bool perChannel,
                          const HostArtifactCompiler &compile, std::vector<CalibratedLayer> &layers,
                          std::string &error) {
  layers.clear();
  func::FuncOp func = mainOf(module);
  if (!func) return true;
  // The activations to observe become extra results (v4f-insert-calibration-taps).
  {
    PassManager pm(module.getContext());
    pm.addPass(createInsertCalibrationTapsPass());
    if (failed(pm.run(module))) {
      error = "calibration: inserting the taps failed";
      return false;
    }
  }
  SmallVector<Operation *> taps = tappedOps(func);
  if (taps.empty()) return true;
  OwningOpRef<ModuleOp> copy = module.clone();
  std::vector<uint8_t> artifact;
  if (!compile(*copy, artifact, error)) {
    error = "calibration: compiling the float model with its taps: " + error;
    return false;
  }
  InProcessModel model;
  if (!model.load(std::move(artifact), error)) {
    error = "calibration: " + error;
    return false;
  }
  size_t first = func.getFunctionType().getNumResults() - taps.size(); // the taps follow the model's results
  std::vector<TapStats> stats(taps.size());
  std::vector<InProcessModel::Output> outs;
  bool histograms = method.kind != CalibrationMethod::MinMax;
  for (int pass = 0; pass < (histograms ? 2 : 1); ++pass) {
    if (pass == 1)
      for (TapStats &t : stats) {
        if (method.kind == CalibrationMethod::Percentile)
          t.valueHist.assign(kCalibrationBins, 0);
        else
          t.absHist.assign(kCalibrationBins, 0);
      }
    for (int64_t s = 0; s < set.samples; ++s) {
      if (!model.run(set, s, outs, error)) {
        error = "calibration: " + error;
        return false;
      }
      for (size_t t = 0; t < taps.size(); ++t) {
        const InProcessModel::Output &o = outs[first + t];
        const float *x = o.f32();
        size_t n = o.elements();
        TapStats &st = stats[t];
        if (pass == 0) {
          for (size_t i = 0; i < n; ++i) {
            if (!std::isfinite(x[i])) {
              error = "calibration: the float model computes NaN or infinity at the input of " +
                      std::string(isa<ConvOp>(taps[t]) ? "conv" : "matmul") + " '" + firstNodeName(taps[t]->getLoc()) +
                      "' on sample " + std::to_string(s) + " of " + set.path;
              return false;
            }
            st.min = std::min(st.min, double(x[i]));
            st.max = std::max(st.max, double(x[i]));
          }
          st.K = o.dims.empty() ? 1 : o.dims.back();
          if (s < kErrorSamples && st.K > 0 && st.kept.size() / size_t(st.K) < kErrorRows) {
            size_t rows = std::min(n / size_t(st.K), kErrorRows - st.kept.size() / size_t(st.K));
            st.kept.insert(st.kept.end(), x, x + rows * size_t(st.K));
          }
        } else if (method.kind == CalibrationMethod::Percentile) {
          histogram(x, n, st.min, st.max, st.valueHist);
        } else {
          absHistogram(x, n, std::max(std::fabs(st.min), std::fabs(st.max)), st.absHist);
        }
      }
    }
  }
  // The ranges (v4f-apply-calibration; it also removes the taps).
  std::vector<ActivationStatistics> observed(taps.size());
  for (size_t t = 0; t < taps.size(); ++t) {
    observed[t].min = stats[t].min;
    observed[t].max = stats[t].max;
    observed[t].valueHist = stats[t].valueHist;
    observed[t].absHist = stats[t].absHist;
  }
  {
    PassManager pm(module.getContext());
    pm.addPass(createApplyCalibrationPass(method, std::move(observed)));
    if (failed(pm.run(module))) {
      error = "calibration: applying the ranges failed";
      return false;
    }
  }
  for (size_t t = 0; t < taps.size(); ++t) {
    TapStats &st = stats[t];
    CalibratedLayer layer{taps[t]->getLoc()};
    layer.node = firstNodeName(taps[t]->getLoc());
    layer.min = st.min;
    layer.max = st.max;
    auto range = taps[t]->getAttrOfType<DenseF32ArrayAttr>("v4f.calibration");
    layer.lo = range ? range[0] : 0.f;
    layer.hi = range ? range[1] : 0.f;
    layer.sqnrDb = layer.maxAbsError = std::numeric_limits<double>::quiet_NaN();
    DenseElementsAttr weight;
    // The layer error is measured for matmuls (a conv's would need its
    // im2col; its report entry has the ranges only).
    auto mm = dyn_cast<MatMulOp>(taps[t]);
    auto wType = mm ? llvm::dyn_cast<RankedTensorType>(mm.getRhs().getType()) : RankedTensorType();
    if (mm && matchPattern(mm.getRhs(), m_Constant(&weight)) && wType && wType.getRank() == 2 &&
        wType.hasStaticShape() && wType.getElementType().isF32() && wType.getDimSize(0) == st.K && !st.kept.empty())
      measureLayer(st.kept, st.K, weight, wType.getDimSize(1), layer.lo, layer.hi, perChannel, layer);
    layers.push_back(layer);
  }
  return true;
}

std::string firstNodeName(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto named = llvm::dyn_cast<NameLoc>(l)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

} // namespace v4f
