//===- runtime_module.cpp - v4f._runtime: the runtime C API for Python ----===//
//
// A nanobind extension over the runtime's C API only (it links the static
// runtime archive: no LLVM, MLIR or protobuf is loaded by `import v4f`).
// The Python-facing class is v4f.Session (python/v4f/_session.py), which
// holds one _Session from here.
//
// Arrays cross without copies: an input that is a C-contiguous NumPy array of
// the input's dtype is read in place (its buffer goes straight to the
// runtime); outputs are NumPy arrays allocated before the run and written by
// the kernels. One copy is made, and counted in `last_input_copies`, for a
// non-contiguous array or a Python sequence/scalar; a DLPack object (a torch
// tensor) is imported with numpy.from_dlpack, in place for CPU memory.
//
// Concurrency: the runtime allows one call at a time per session. Calls on one
// _Session are serialized by a mutex that is only ever waited on with the GIL
// released (so a thread holding the mutex can always take the GIL back); the
// GIL is released while loading and while the kernels run.
//
//===----------------------------------------------------------------------===//
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "v4f/runtime.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;

namespace {

//===----------------------------------------------------------------------===//
// Errors: raised as the classes of v4f._errors
//===----------------------------------------------------------------------===//

/// The exception class for a runtime status code (or `closed` for the
/// session-closed error), looked up once in v4f._errors and kept for the
/// process's life (never released: no decref after interpreter shutdown).
PyObject *errorClass(const char *name) {
  static std::unordered_map<std::string, PyObject *> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  nb::object cls = nb::module_::import_("v4f._errors").attr(name);
  PyObject *p = cls.release().ptr();
  cache.emplace(name, p);
  return p;
}

/// str(obj), as a C++ string.
std::string text(nb::handle obj) {
  PyObject *s = PyObject_Str(obj.ptr());
  if (!s) throw nb::python_error();
  return nb::cast<std::string>(nb::steal<nb::str>(s));
}

/// Whether NumPy dtype objects `a` and `b` are equal (identity first).
bool sameDtype(nb::handle a, nb::handle b) {
  int same = PyObject_RichCompareBool(a.ptr(), b.ptr(), Py_EQ);
  if (same < 0) throw nb::python_error();
  return same != 0;
}

/// The message of a caught Python exception.
std::string messageOf(const nb::python_error &e) { return text(e.value()); }

[[noreturn]] void raise(const char *cls, const std::string &message) {
  PyErr_SetString(errorClass(cls), message.c_str());
  throw nb::python_error();
}

const char *classForCode(v4f_status_code_t code) {
  switch (code) {
  case V4F_STATUS_INVALID_ARGUMENT: return "InvalidArgumentError";
  case V4F_STATUS_NOT_FOUND: return "NotFoundError";
  case V4F_STATUS_INVALID_ARTIFACT: return "InvalidArtifactError";
  case V4F_STATUS_UNSUPPORTED: return "UnsupportedError";
  case V4F_STATUS_RESOURCE_EXHAUSTED: return "ResourceExhaustedError";
  case V4F_STATUS_KERNEL_ERROR: return "KernelError";
  default: return "InternalError";
  }
}

/// Raises the status as its v4f.Error subclass (consuming it); no-op on OK.
void check(v4f_status_t status) {
  if (!status) return;
  std::string message = v4f_status_message(status);
  const char *cls = classForCode(v4f_status_code(status));
  v4f_status_free(status);
  raise(cls, message);
}

//===----------------------------------------------------------------------===//
// NumPy, reached through Python calls and the buffer protocol (no NumPy
// headers at build time)
//===----------------------------------------------------------------------===//

struct NumPy {
  nb::object module, ndarray, empty, asarray, ascontiguousarray, fromDlpack;
  static NumPy &get() {
    static NumPy *np = [] {
      auto *n = new NumPy; // kept for the process's life, like errorClass
      n->module = nb::module_::import_("numpy");
      n->ndarray = n->module.attr("ndarray");
      n->empty = n->module.attr("empty");
      n->asarray = n->module.attr("asarray");
      n->ascontiguousarray = n->module.attr("ascontiguousarray");
      n->fromDlpack = n->module.attr("from_dlpack");
      return n;
    }();
    return *np;
  }
};

/// Owns one Py_buffer.
struct Buffer {
  Py_buffer view{};
  bool held = false;
  Buffer() = default;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { release(); }
  void release() {
    if (held) PyBuffer_Release(&view);
    held = false;
  }
  /// False (with the Python error cleared) when `obj` does not export one.
  bool acquire(PyObject *obj, int flags) {
    release();
    if (PyObject_GetBuffer(obj, &view, flags) != 0) {
      PyErr_Clear();
      return false;
    }
    held = true;
    return true;
  }
};

/// How a runtime dtype appears in NumPy: `dtype` is what callers pass and get
/// back; `raw` (or None) is a same-size plain dtype the array is viewed as to
/// reach its bytes (ml_dtypes types such as bfloat16 do not export buffers).
struct NumpyType {
  nb::object dtype, raw;
};

struct TensorSlot {
  std::string name;
  nb::object key; // interned str, for dict lookups
  int32_t dtype = 0;
  int32_t rank = 0;
  NumpyType np;
  bool fedBack = false; // in a feedback binding
};

std::string dimsText(const int64_t *dims, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// _Model: a loaded artifact, shared by the sessions made from it
//===----------------------------------------------------------------------===//

/// The runtime's model and what it reads: the runtime requires the model to
/// outlive its sessions, so each session holds a shared_ptr to this (released
/// with the GIL held: from a Python dealloc or a close()).
struct LoadedModel {
  v4f_model_t *model = nullptr;
  Buffer source;           // a bytes-like source: the runtime reads it in place
  nb::object sourceObject; // (or copies it once when it is not 64-byte aligned)
  LoadedModel() = default;
  LoadedModel(const LoadedModel &) = delete;
  LoadedModel &operator=(const LoadedModel &) = delete;
  ~LoadedModel() { v4f_model_release(model); }

  /// Loads `source`, a path (str) or a bytes-like object; the GIL is
  /// released while the file is mapped and its digests checked.
  static std::shared_ptr<LoadedModel> load(nb::object source, bool verifyDigests, const std::string &disabled) {
    auto m = std::make_shared<LoadedModel>();
    v4f_model_options_t mopts;
    v4f_model_options_init(&mopts);
    mopts.verify_digests = verifyDigests ? 1 : 0;
    mopts.disabled_cpu_features = disabled.c_str();
    v4f_status_t status = nullptr;
    if (nb::isinstance<nb::str>(source)) {
      std::string path = nb::cast<std::string>(source);
      nb::gil_scoped_release unlocked;
      status = v4f_model_load_file(path.c_str(), &mopts, nullptr, &m->model);
    } else {
      if (!m->source.acquire(source.ptr(), PyBUF_SIMPLE))
        raise("InvalidArgumentError", "the model must be a path or a bytes-like object holding an artifact");
      m->sourceObject = source;
      nb::gil_scoped_release unlocked;
      status = v4f_model_load_memory(m->source.view.buf, size_t(m->source.view.len), &mopts, nullptr, &m->model);
    }
    check(status);
    return m;
  }
};

/// [(name, dtype code, [dim: int, or its name where symbolic])].
nb::list signatureOf(const v4f_model_t *model, bool isInput) {
  nb::list l;
  if (!model) return l;
  size_t n = isInput ? v4f_model_input_count(model) : v4f_model_output_count(model);
  for (size_t k = 0; k < n; ++k) {
    v4f_tensor_info_t ti;
    check(isInput ? v4f_model_input_info(model, k, &ti) : v4f_model_output_info(model, k, &ti));
    nb::list dims;
    for (int32_t d = 0; d < ti.rank; ++d) {
      if (ti.dims[d] >= 0)
        dims.append(ti.dims[d]);
      else
        dims.append(nb::str(*ti.dim_names[d] ? ti.dim_names[d] : "?"));
    }
    l.append(nb::make_tuple(nb::str(ti.name), ti.dtype, dims));
  }
  return l;
}

class Model {
public:
  Model(nb::object source, bool verifyDigests, const std::string &disabledFeatures)
      : loaded(LoadedModel::load(std::move(source), verifyDigests, disabledFeatures)) {}
  std::shared_ptr<LoadedModel> loaded;
  const v4f_model_t *m() const { return loaded->model; }
};

//===----------------------------------------------------------------------===//
// _Session
//===----------------------------------------------------------------------===//

class Session {
public:
  /// `source`: a path (str) or a bytes-like object holding the artifact;
  /// `dtypes`: {V4F_DTYPE code: (numpy dtype, raw view dtype or None)}.
  Session(nb::object source, int32_t threads, bool verifyDigests, const std::string &disabledFeatures, nb::dict dtypes)
      : Session(LoadedModel::load(std::move(source), verifyDigests, disabledFeatures), threads, dtypes) {}

  /// A session of an already loaded model (shared with its other sessions).
  Session(const Model &model, int32_t threads, nb::dict dtypes) : Session(model.loaded, threads, dtypes) {}

  Session(std::shared_ptr<LoadedModel> loaded, int32_t threads, nb::dict dtypes)
      : loaded_(std::move(loaded)), model_(loaded_->model) {
    v4f_status_t status;
    v4f_session_options_t sopts;
    v4f_session_options_init(&sopts);
    sopts.thread_count = threads;
    status = v4f_session_create(model_, &sopts, nullptr, &session_);
    if (status) {
      closeHandles();
      check(status);
    }
    try {
      describe(dtypes);
    } catch (...) {
      closeHandles();
      throw;
    }
  }

  ~Session() { closeHandles(); }

  void close() {
    Lock lock(*this);
    closeHandles();
  }

  bool closed() const { return session_ == nullptr; }

  nb::list inputInfo() const { return info(true); }
  nb::list outputInfo() const { return info(false); }

  nb::list run(nb::handle outputNames, nb::handle feed, nb::handle out) {
    NumPy &np = NumPy::get();
    nb::object feedHolder;
    if (!PyDict_Check(feed.ptr())) {
      if (feed.is_none() || !PyObject_HasAttrString(feed.ptr(), "keys")) // not a mapping
        raise("InvalidArgumentError", "run: the inputs must be a dict {name: array}");
      PyObject *copy = PyObject_CallOneArg(reinterpret_cast<PyObject *>(&PyDict_Type), feed.ptr()); // any mapping
      if (!copy) throw nb::python_error();
      feedHolder = nb::steal(copy);
      feed = feedHolder;
    }
    if (!out.is_none() && !PyDict_Check(out.ptr()))
      raise("InvalidArgumentError", "run: out= must be a dict {output name: array}");
    std::vector<size_t> wanted = selectOutputs(outputNames);
    Lock lock(*this);
    if (!session_) raise("SessionClosedError", "run: the session is closed");

    // Inputs, in the model's order.
    const size_t nIn = inputs_.size(), nOut = outputs_.size();
    std::vector<v4f_tensor_t> in(nIn);
    std::vector<Buffer> inBuffers(nIn);
    std::vector<nb::object> inKeep(nIn);
    lastInputCopies_ = 0;
    lastInputAddresses_.assign(nIn, 0);
    Py_ssize_t matched = 0;
    for (size_t i = 0; i < nIn; ++i) {
      PyObject *value = PyDict_GetItemWithError(feed.ptr(), inputs_[i].key.ptr());
      if (!value && PyErr_Occurred()) throw nb::python_error();
      if (!value) {
        if (inputs_[i].fedBack && primed_) { // the runtime substitutes the previous output
          in[i].dtype = inputs_[i].dtype;
          in[i].rank = inputs_[i].rank;
          continue;
        }
        raise("InvalidArgumentError",
              "run: missing input '" + inputs_[i].name + "' (the model's inputs: " + names(inputs_) + ")");
      }
      ++matched;
      prepareInput(np, inputs_[i], value, in[i], inBuffers[i], inKeep[i]);
      lastInputAddresses_[i] = reinterpret_cast<uintptr_t>(in[i].data);
    }
    if (PyDict_Size(feed.ptr()) != matched) reportExtraInputs(feed);

    // Output shapes, then the arrays the kernels write.
    std::vector<v4f_tensor_t> outs(nOut);
    check(v4f_session_resolve_output_shapes(session_, in.data(), nIn, outs.data(), nOut));
    std::vector<nb::object> arrays(nOut), views(nOut);
    std::vector<Buffer> outBuffers(nOut);
    for (size_t j = 0; j < nOut; ++j) {
      if (outputs_[j].fedBack) continue; // the session's buffer, copied after the run
      PyObject *given = out.is_none() ? nullptr : PyDict_GetItemWithError(out.ptr(), outputs_[j].key.ptr());
      if (!given && PyErr_Occurred()) throw nb::python_error();
      if (given) {
        arrays[j] = nb::borrow(given);
        checkOutArray(np, outputs_[j], arrays[j], outs[j]);
      } else {
        arrays[j] = np.empty(shapeTuple(outs[j].dims, outs[j].rank), outputs_[j].np.dtype);
      }
      views[j] = outputs_[j].np.raw.is_none() ? arrays[j] : arrays[j].attr("view")(outputs_[j].np.raw);
      if (!outBuffers[j].acquire(views[j].ptr(), PyBUF_STRIDED))
        raise("InvalidArgumentError", "run: output '" + outputs_[j].name + "': the array is not writable");
      outs[j].data = outBuffers[j].view.buf;
      outs[j].byte_size = size_t(outBuffers[j].view.len);
    }
    if (!out.is_none()) checkOutNames(out);

    v4f_status_t status;
    {
      nb::gil_scoped_release unlocked;
      status = v4f_session_run(session_, in.data(), nIn, outs.data(), nOut);
    }
    check(status);
    if (anyFeedback_) primed_ = true;

    nb::list result;
    for (size_t j : wanted) result.append(finishOutput(np, j, arrays[j], outs[j]));
    return result;
  }

  void bindFeedback(const std::string &output, const std::string &input) {
    size_t o = indexOf(outputs_, output, "output"), i = indexOf(inputs_, input, "input");
    Lock lock(*this);
    if (!session_) raise("SessionClosedError", "bind_feedback: the session is closed");
    check(v4f_session_bind_feedback(session_, o, i));
    outputs_[o].fedBack = inputs_[i].fedBack = anyFeedback_ = true;
    primed_ = false;
  }

  void resetFeedback() {
    Lock lock(*this);
    if (!session_) raise("SessionClosedError", "reset_feedback: the session is closed");
    check(v4f_session_reset_feedback(session_));
    primed_ = false;
  }

  void setProfiling(bool enable) {
    Lock lock(*this);
    if (!session_) raise("SessionClosedError", "set_profiling: the session is closed");
    check(v4f_session_set_profiling(session_, enable ? 1 : 0));
  }

  nb::list profile() {
    Lock lock(*this);
    if (!session_) raise("SessionClosedError", "profile: the session is closed");
    nb::list entries;
    for (size_t k = 0, n = v4f_session_profile_count(session_); k < n; ++k) {
      v4f_dispatch_profile_t e;
      check(v4f_session_profile_entry(session_, k, &e));
      nb::dict d;
      d["name"] = e.name;
      d["kernel"] = e.kernel;
      d["dispatch_index"] = e.dispatch_index;
      d["workgroups"] = e.workgroups;
      d["start_ns"] = e.start_ns;
      d["duration_ns"] = e.duration_ns;
      d["flops"] = e.flops < 0 ? nb::none() : nb::cast(e.flops);
      entries.append(d);
    }
    return entries;
  }

  // Metadata ("" / 0 once closed); under the lock, so a close() on another
  // thread cannot free the model in between.
  std::string modelName() {
    Lock lock(*this);
    return model_ ? v4f_model_name(model_) : "";
  }
  std::string producer() {
    Lock lock(*this);
    return model_ ? v4f_model_producer(model_) : "";
  }
  std::string targetCpu() {
    Lock lock(*this);
    return model_ ? v4f_model_target_cpu(model_) : "";
  }
  size_t variant() {
    Lock lock(*this);
    return model_ ? v4f_model_variant(model_) : 0;
  }
  size_t variantCount() {
    Lock lock(*this);
    return model_ ? v4f_model_variant_count(model_) : 0;
  }
  int32_t threadCount() {
    Lock lock(*this);
    return session_ ? v4f_session_thread_count(session_) : 0;
  }
  size_t peakMemory() {
    Lock lock(*this);
    return session_ ? v4f_session_peak_memory(session_) : 0;
  }
  size_t lastInputCopies() {
    Lock lock(*this);
    return lastInputCopies_;
  }
  nb::list lastInputAddresses() {
    Lock lock(*this);
    nb::list l;
    for (uintptr_t a : lastInputAddresses_) l.append(a);
    return l;
  }

private:
  /// Holds the session's mutex. Uncontended: taken with the GIL held (a
  /// try_lock never blocks). Contended: waited for with the GIL released, so
  /// the holder can always get the GIL back.
  struct Lock {
    Session &s;
    explicit Lock(Session &session) : s(session) {
      if (!s.mutex_.try_lock()) {
        nb::gil_scoped_release unlocked;
        s.mutex_.lock();
      }
    }
    ~Lock() { s.mutex_.unlock(); }
  };

  void closeHandles() {
    v4f_session_release(session_);
    session_ = nullptr;
    model_ = nullptr;
    loaded_.reset(); // the model goes with its last session or _Model
  }

  void describe(nb::dict dtypes) {
    auto fill = [&](bool isInput, std::vector<TensorSlot> &slots) {
      size_t n = isInput ? v4f_model_input_count(model_) : v4f_model_output_count(model_);
      for (size_t k = 0; k < n; ++k) {
        v4f_tensor_info_t ti;
        check(isInput ? v4f_model_input_info(model_, k, &ti) : v4f_model_output_info(model_, k, &ti));
        TensorSlot slot;
        slot.name = ti.name;
        slot.key = nb::str(ti.name);
        PyObject *key = slot.key.release().ptr();
        PyUnicode_InternInPlace(&key);
        slot.key = nb::steal(key);
        slot.dtype = ti.dtype;
        slot.rank = ti.rank;
        nb::object code = nb::int_(ti.dtype);
        if (!dtypes.contains(code)) {
          raise("UnsupportedError", std::string(isInput ? "input '" : "output '") + ti.name + "' has dtype " +
                                        v4f_dtype_name(ti.dtype) + ", which has no NumPy type here" +
                                        " (bfloat16, float8, int4 and the like need the ml_dtypes package)");
        }
        nb::tuple t = nb::cast<nb::tuple>(dtypes[code]);
        slot.np.dtype = t[0];
        slot.np.raw = t[1];
        slots.push_back(std::move(slot));
      }
    };
    fill(true, inputs_);
    fill(false, outputs_);
  }

  nb::list info(bool isInput) const { return signatureOf(model_, isInput); }

  static std::string names(const std::vector<TensorSlot> &slots) {
    std::string s;
    for (const TensorSlot &t : slots) s += (s.empty() ? "'" : ", '") + t.name + "'";
    return s.empty() ? "none" : s;
  }

  static size_t indexOf(const std::vector<TensorSlot> &slots, const std::string &name, const char *what) {
    for (size_t k = 0; k < slots.size(); ++k)
      if (slots[k].name == name) return k;
    raise("InvalidArgumentError",
          std::string("the model has no ") + what + " named '" + name + "' (its " + what + "s: " + names(slots) + ")");
  }

  std::vector<size_t> selectOutputs(nb::handle outputNames) const {
    std::vector<size_t> wanted;
    if (outputNames.is_none()) {
      for (size_t j = 0; j < outputs_.size(); ++j) wanted.push_back(j);
      return wanted;
    }
    if (nb::isinstance<nb::str>(outputNames))
      raise("InvalidArgumentError", "run: output_names must be a list of names or None, not a string");
    for (nb::handle h : outputNames) {
      if (!nb::isinstance<nb::str>(h)) raise("InvalidArgumentError", "run: output_names must hold strings");
      wanted.push_back(indexOf(outputs_, nb::cast<std::string>(h), "output"));
    }
    return wanted;
  }

  void reportExtraInputs(nb::handle feed) const {
    for (auto [key, value] : nb::borrow<nb::dict>(feed)) {
      if (!nb::isinstance<nb::str>(key))
        raise("InvalidArgumentError", "run: input names must be strings, got " + text(key.type().attr("__name__")));
      std::string name = nb::cast<std::string>(key);
      bool known = false;
      for (const TensorSlot &t : inputs_) known |= t.name == name;
      if (!known)
        raise("InvalidArgumentError",
              "run: the model has no input named '" + name + "' (its inputs: " + names(inputs_) + ")");
    }
  }

  static nb::tuple shapeTuple(const int64_t *dims, int32_t rank) {
    PyObject *t = PyTuple_New(rank);
    if (!t) throw nb::python_error();
    for (int32_t i = 0; i < rank; ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(dims[i]));
    return nb::steal<nb::tuple>(t);
  }

  /// Fills `tensor` from `value` for input `slot`, in place when it is a
  /// C-contiguous array of the right dtype; `keep` holds the array read.
  void prepareInput(NumPy &np, const TensorSlot &slot, PyObject *value, v4f_tensor_t &tensor, Buffer &buffer,
                    nb::object &keep) {
    nb::object array;
    if (PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject *>(np.ndarray.ptr()))) {
      array = nb::borrow(value);
    } else if (PyObject_HasAttrString(value, "__dlpack__")) {
      try {
        array = np.fromDlpack(nb::handle(value));
      } catch (nb::python_error &e) {
        raise("InvalidArgumentError", "run: input '" + slot.name + "': cannot read it through DLPack (" + messageOf(e) +
                                          "); v4f runs on the CPU, so pass host memory");
      }
    } else {
      try {
        array = np.asarray(nb::handle(value), slot.np.dtype);
      } catch (nb::python_error &e) {
        raise("InvalidArgumentError", "run: input '" + slot.name + "': cannot convert it to an array of " +
                                          v4f_dtype_name(slot.dtype) + " (" + messageOf(e) + ")");
      }
      ++lastInputCopies_;
    }
    nb::object dtype = array.attr("dtype");
    if (!sameDtype(dtype, slot.np.dtype))
      raise("InvalidArgumentError", "run: input '" + slot.name + "' has dtype " + text(dtype) + "; the model expects " +
                                        v4f_dtype_name(slot.dtype) + " (convert it with .astype(), v4f does not cast)");
    nb::object view = slot.np.raw.is_none() ? array : array.attr("view")(slot.np.raw);
    if (!buffer.acquire(view.ptr(), PyBUF_STRIDED_RO))
      raise("InvalidArgumentError", "run: input '" + slot.name + "': the array does not expose its memory");
    if (!PyBuffer_IsContiguous(&buffer.view, 'C')) {
      view = np.ascontiguousarray(view); // the one documented copy
      ++lastInputCopies_;
      if (!buffer.acquire(view.ptr(), PyBUF_STRIDED_RO))
        raise("InternalError", "run: input '" + slot.name + "': cannot read the contiguous copy");
    }
    if (buffer.view.ndim > V4F_MAX_RANK)
      raise("InvalidArgumentError", "run: input '" + slot.name + "' has rank " + std::to_string(buffer.view.ndim) +
                                        "; the runtime takes at most " + std::to_string(V4F_MAX_RANK));
    tensor.data = buffer.view.buf;
    tensor.byte_size = size_t(buffer.view.len);
    tensor.dtype = slot.dtype;
    tensor.rank = buffer.view.ndim;
    for (int d = 0; d < buffer.view.ndim; ++d) tensor.dims[d] = buffer.view.shape[d];
    keep = std::move(view);
  }

  void checkOutArray(NumPy &np, const TensorSlot &slot, nb::handle array, const v4f_tensor_t &need) const {
    std::string what = "run: out['" + slot.name + "']";
    if (!PyObject_TypeCheck(array.ptr(), reinterpret_cast<PyTypeObject *>(np.ndarray.ptr())))
      raise("InvalidArgumentError", what + " must be a numpy.ndarray");
    if (!sameDtype(array.attr("dtype"), slot.np.dtype))
      raise("InvalidArgumentError",
            what + " has dtype " + text(array.attr("dtype")) + "; the output is " + v4f_dtype_name(slot.dtype));
    if (!nb::cast<bool>(array.attr("flags").attr("c_contiguous")) ||
        !nb::cast<bool>(array.attr("flags").attr("writeable")))
      raise("InvalidArgumentError", what + " must be C-contiguous and writable");
    nb::tuple shape = nb::cast<nb::tuple>(array.attr("shape"));
    bool ok = int32_t(shape.size()) == need.rank;
    for (int32_t d = 0; ok && d < need.rank; ++d) ok = nb::cast<int64_t>(shape[d]) == need.dims[d];
    if (!ok)
      raise("InvalidArgumentError",
            what + " has shape " + text(shape) + "; for these inputs the output is " + dimsText(need.dims, need.rank));
  }

  void checkOutNames(nb::handle out) const {
    for (auto [key, value] : nb::borrow<nb::dict>(out)) {
      std::string name = nb::isinstance<nb::str>(key) ? nb::cast<std::string>(key) : "?";
      size_t j = indexOf(outputs_, name, "output");
      if (outputs_[j].fedBack)
        raise("InvalidArgumentError", "run: out['" + name +
                                          "']: the output is fed back to an input; the session "
                                          "owns its buffer");
    }
  }

  /// The array returned for output `j` after the run.
  nb::object finishOutput(NumPy &np, size_t j, nb::object array, const v4f_tensor_t &t) {
    if (outputs_[j].fedBack) {
      // The session's buffer is reused by the next run: return a copy.
      nb::object copy = np.empty(shapeTuple(t.dims, t.rank), outputs_[j].np.dtype);
      nb::object view = outputs_[j].np.raw.is_none() ? copy : copy.attr("view")(outputs_[j].np.raw);
      Buffer b;
      if (!b.acquire(view.ptr(), PyBUF_STRIDED)) raise("InternalError", "run: cannot write an output copy");
      if (size_t(b.view.len) > 0) std::memcpy(b.view.buf, t.data, size_t(b.view.len));
      return copy;
    }
    nb::tuple shape = nb::cast<nb::tuple>(array.attr("shape"));
    bool same = int32_t(shape.size()) == t.rank;
    for (int32_t d = 0; same && d < t.rank; ++d) same = nb::cast<int64_t>(shape[d]) == t.dims[d];
    if (same) return array;
    // Dims that depend on input values (NonZero): the array was sized for the
    // upper bound and the first elements hold the result.
    int64_t count = 1;
    for (int32_t d = 0; d < t.rank; ++d) count *= t.dims[d];
    nb::object flat = array.attr("reshape")(-1);
    nb::object head = flat[nb::slice(nb::int_(0), nb::int_(count), nb::none())];
    return head.attr("reshape")(shapeTuple(t.dims, t.rank));
  }

  std::shared_ptr<LoadedModel> loaded_;
  v4f_model_t *model_ = nullptr; // loaded_->model while open
  v4f_session_t *session_ = nullptr;
  std::vector<TensorSlot> inputs_, outputs_;
  std::mutex mutex_;
  bool anyFeedback_ = false, primed_ = false;
  size_t lastInputCopies_ = 0;
  std::vector<uintptr_t> lastInputAddresses_;
};

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "v4f runtime bindings (the C runtime only; see v4f.Session)";
  m.def("runtime_version", [] { return std::string(v4f_runtime_version()); });
  m.def("cpu_has_feature", [](const std::string &name) { return v4f_cpu_has_feature(name.c_str()); });
  m.def("dtype_name", [](int32_t code) { return std::string(v4f_dtype_name(code)); });
  m.attr("MAX_RANK") = V4F_MAX_RANK;

  nb::class_<Model>(m, "_Model")
      .def(nb::init<nb::object, bool, const std::string &>(), nb::arg("source"), nb::arg("verify_digests"),
           nb::arg("disabled_cpu_features"))
      .def("input_info", [](const Model &self) { return signatureOf(self.m(), true); })
      .def("output_info", [](const Model &self) { return signatureOf(self.m(), false); })
      .def_prop_ro("model_name", [](const Model &self) { return std::string(v4f_model_name(self.m())); })
      .def_prop_ro("producer", [](const Model &self) { return std::string(v4f_model_producer(self.m())); })
      .def_prop_ro("target_cpu", [](const Model &self) { return std::string(v4f_model_target_cpu(self.m())); })
      .def_prop_ro("variant", [](const Model &self) { return v4f_model_variant(self.m()); })
      .def_prop_ro("variant_count", [](const Model &self) { return v4f_model_variant_count(self.m()); });

  nb::class_<Session>(m, "_Session")
      .def(nb::init<const Model &, int32_t, nb::dict>(), nb::arg("model"), nb::arg("threads"), nb::arg("dtypes"))
      .def(nb::init<nb::object, int32_t, bool, const std::string &, nb::dict>(), nb::arg("source"), nb::arg("threads"),
           nb::arg("verify_digests"), nb::arg("disabled_cpu_features"), nb::arg("dtypes"))
      .def("close", &Session::close)
      .def_prop_ro("closed", &Session::closed)
      .def("input_info", &Session::inputInfo)
      .def("output_info", &Session::outputInfo)
      .def("run", &Session::run, nb::arg("output_names").none(), nb::arg("feed").none(), nb::arg("out").none())
      .def("bind_feedback", &Session::bindFeedback)
      .def("reset_feedback", &Session::resetFeedback)
      .def("set_profiling", &Session::setProfiling)
      .def("profile", &Session::profile)
      .def_prop_ro("model_name", &Session::modelName)
      .def_prop_ro("producer", &Session::producer)
      .def_prop_ro("target_cpu", &Session::targetCpu)
      .def_prop_ro("variant", &Session::variant)
      .def_prop_ro("variant_count", &Session::variantCount)
      .def_prop_ro("thread_count", &Session::threadCount)
      .def_prop_ro("peak_memory", &Session::peakMemory)
      .def_prop_ro("last_input_copies", &Session::lastInputCopies)
      .def("last_input_addresses", &Session::lastInputAddresses);
}
