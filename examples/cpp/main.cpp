// main.cpp — librlx from C++, through the C API of rlx.h as installed:
// load an export directory, compile it for the CPU, bind inputs by name,
// run, and print the outputs. The handles are held by std::unique_ptr with
// the matching rlx_*_destroy, and a failed call becomes an exception that
// carries rlx_last_error().
//
//   rlx_cpp_example EXPORT_DIR
//
// Inputs and output lines are those of examples/example.c (token ids 0, 1,
// 2, ... for integer inputs; a smooth ramp for float inputs), so the two
// programs print the same text for a model; scripts/install_check.sh
// compares them. Build: CMakeLists.txt (find_package) or Makefile
// (pkg-config) beside this file.
#include <rlx.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct ModelDeleter {
  void operator()(rlx_model *m) const { rlx_model_destroy(m); }
};
struct CompiledDeleter {
  void operator()(rlx_compiled *c) const { rlx_compiled_destroy(c); }
};
struct SessionDeleter {
  void operator()(rlx_session *s) const { rlx_session_destroy(s); }
};
using Model = std::unique_ptr<rlx_model, ModelDeleter>;
using Compiled = std::unique_ptr<rlx_compiled, CompiledDeleter>;
using Session = std::unique_ptr<rlx_session, SessionDeleter>;

// Throws for a failed call, with the status and the message naming the culprit.
void check(rlx_status st, const char *what) {
  if (st != RLX_OK)
    throw std::runtime_error(std::string(what) + " failed (" + rlx_status_string(st) +
                             "): " + rlx_last_error());
}

// Caller memory for one input, filled as examples/example.c fills it.
// int64_t elements keep every dtype's alignment.
std::vector<int64_t> make_input(const rlx_io_info &in, int64_t n) {
  size_t bytes = static_cast<size_t>(n) * rlx_dtype_size(in.dtype);
  std::vector<int64_t> buf(bytes / sizeof(int64_t) + 1, 0);
  void *data = buf.data();
  for (int64_t i = 0; i < n; i++) {
    switch (in.dtype) {
      case RLX_DTYPE_F32: static_cast<float *>(data)[i] = static_cast<float>((i % 17) - 8) / 8.0f; break;
      case RLX_DTYPE_F64: static_cast<double *>(data)[i] = static_cast<double>((i % 17) - 8) / 8.0; break;
      case RLX_DTYPE_I64: static_cast<int64_t *>(data)[i] = i % 32; break;
      case RLX_DTYPE_I32: static_cast<int32_t *>(data)[i] = static_cast<int32_t>(i % 32); break;
      case RLX_DTYPE_BOOL: static_cast<unsigned char *>(data)[i] = 1; break;
      default: break; // other dtypes: zero bytes
    }
  }
  return buf;
}

void run(const char *dir) {
  rlx_model *m = nullptr;
  check(rlx_model_load(dir, nullptr, &m), "rlx_model_load");
  Model model(m);

  rlx_compile_options opts;
  rlx_compile_options_init(&opts);
  rlx_compiled *c = nullptr;
  check(rlx_model_compile(model.get(), &opts, &c), "rlx_model_compile");
  Compiled compiled(c);

  rlx_session *s = nullptr;
  check(rlx_session_create(compiled.get(), &s), "rlx_session_create");
  Session session(s);

  // The session reads these during each run: they live until it is destroyed.
  int n_in = rlx_model_input_count(model.get());
  std::vector<std::vector<int64_t>> buffers;
  buffers.reserve(static_cast<size_t>(n_in));
  for (int i = 0; i < n_in; i++) {
    rlx_io_info info;
    check(rlx_model_input_info(model.get(), i, &info), "rlx_model_input_info");
    rlx_tensor_view v{};
    v.dtype = info.dtype;
    v.rank = info.rank;
    int64_t n = 1;
    for (int d = 0; d < info.rank; d++) n *= (v.dims[d] = info.dims[d]);
    buffers.push_back(make_input(info, n));
    v.data = buffers.back().data();
    std::printf("input  %-10s %s, %lld elements\n", info.name, rlx_dtype_name(info.dtype),
                static_cast<long long>(n));
    check(rlx_session_bind_input(session.get(), info.name, &v), "rlx_session_bind_input");
  }
  check(rlx_session_run(session.get()), "rlx_session_run");

  for (int i = 0; i < rlx_model_output_count(model.get()); i++) {
    rlx_tensor_view out;
    check(rlx_session_output(session.get(), i, &out), "rlx_session_output");
    std::printf("output %d: %s [", i, rlx_dtype_name(out.dtype));
    for (int d = 0; d < out.rank; d++)
      std::printf(d ? ", %lld" : "%lld", static_cast<long long>(out.dims[d]));
    std::printf("] first values:");
    int64_t n = rlx_view_numel(&out);
    for (int64_t k = 0; k < n && k < 5; k++) {
      if (out.dtype == RLX_DTYPE_F32)
        std::printf(" %.5f", static_cast<double>(static_cast<const float *>(out.data)[k]));
      else if (out.dtype == RLX_DTYPE_I64)
        std::printf(" %lld", static_cast<long long>(static_cast<const int64_t *>(out.data)[k]));
    }
    std::printf("\n");
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s EXPORT_DIR\n", argv[0]);
    return 2;
  }
  try {
    run(argv[1]);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
