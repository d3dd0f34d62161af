/*
 * rlx.h — the whole public API of librlx.
 *
 * rlx runs PyTorch programs exported with `python3 -m rlx.export` (a
 * directory holding torch-ir.json, weights.safetensors and, for checking,
 * reference.safetensors) from C, with no Python at run time.
 *
 * Lifecycle (each stage cheap to repeat):
 *
 *   rlx_model_load      import + lower + verify an export directory
 *   rlx_model_compile   passes (fold, dead code), kernel choice  -> rlx_compiled
 *   rlx_session_create  one thread's mutable state; plans memory for the
 *                       recorded input shapes
 *   rlx_session_bind_input / rlx_session_bind_output   typed views by name
 *   rlx_session_run     executes; allocates nothing
 *   rlx_session_output  reads an output (a view into the session's arena)
 *   *_destroy           destroy(NULL) is a no-op
 *
 * Errors: every fallible call returns rlx_status; results come back through
 * trailing *_out pointers written only on success. rlx_last_error() gives a
 * message for the last failed call on the calling thread that names the
 * culprit (FX node name, aten op, tensor, file offset).
 *
 * Threads: an rlx_model and an rlx_compiled are immutable after creation and
 * may be shared by threads; an rlx_session belongs to one thread at a time.
 */
#ifndef RLX_H
#define RLX_H

#include <stddef.h>
#include <stdint.h>

/* RLX_API marks what librlx.so exports. The library is compiled with
 * -fvisibility=hidden, so the functions declared here with RLX_API are the
 * whole of its dynamic symbol table (tests/abi.sh checks both ways). */
#if defined(__GNUC__) || defined(__clang__)
#define RLX_API __attribute__((visibility("default")))
#else
#define RLX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version, in one place: CMake reads these lines for the project version,
 * the package files and the soname, librlx.so.RLX_VERSION_MAJOR. A change to
 * this header that breaks callers built against an earlier one (a function
 * removed or changed, a public struct or enum reordered or resized) raises
 * the major version. */
#define RLX_VERSION_MAJOR 0
#define RLX_VERSION_MINOR 1
#define RLX_VERSION_PATCH 0

/* Highest tensor rank rlx handles. */
#define RLX_MAX_RANK 8

/* ---- status ------------------------------------------------------------ */

typedef enum rlx_status {
  RLX_OK = 0,
  RLX_ERR_INVALID_ARGUMENT, /* a caller passed a bad argument */
  RLX_ERR_IO,               /* a file could not be opened, read or mapped */
  RLX_ERR_FORMAT,           /* a file is malformed (JSON, safetensors, npy) */
  RLX_ERR_UNSUPPORTED,      /* an op, dtype or feature rlx does not handle */
  RLX_ERR_SHAPE,            /* a shape or dtype does not match */
  RLX_ERR_NOT_FOUND,        /* a named input, output or weight is missing */
  RLX_ERR_OUT_OF_MEMORY,
  RLX_ERR_RUNTIME,          /* a kernel refused its data (e.g. index out of range) */
  RLX_ERR_INTERNAL,         /* a bug in rlx */
  RLX_STATUS_COUNT
} rlx_status;

/* Static string naming a status ("ok", "format error", ...). */
RLX_API const char *rlx_status_string(rlx_status s);

/* Message for the last failed call on this thread; "" if none. The pointer
 * stays valid until the next rlx call on this thread. */
RLX_API const char *rlx_last_error(void);

/* ---- dtypes ------------------------------------------------------------ */

/* The one list of element types: X(ENUM, token, size in bytes).
 * The token is the one torch-ir.json uses. Append-only: the values are ABI. */
#define RLX_DTYPE_LIST(X) \
  X(F32, "f32", 4)        \
  X(F16, "f16", 2)        \
  X(BF16, "bf16", 2)      \
  X(F64, "f64", 8)        \
  X(I64, "i64", 8)        \
  X(I32, "i32", 4)        \
  X(I16, "i16", 2)        \
  X(I8, "i8", 1)          \
  X(U8, "u8", 1)          \
  X(BOOL, "bool", 1)      \
  X(U16, "u16", 2)        \
  X(U32, "u32", 4)        \
  X(U64, "u64", 8)

typedef enum rlx_dtype {
#define RLX_X_(e, tok, size) RLX_DTYPE_##e,
  RLX_DTYPE_LIST(RLX_X_)
#undef RLX_X_
  RLX_DTYPE_COUNT
} rlx_dtype;

/* "f32", ... or "?" for an invalid value. */
RLX_API const char *rlx_dtype_name(rlx_dtype t);
/* Bytes per element; 0 for an invalid value. */
RLX_API size_t rlx_dtype_size(rlx_dtype t);

/* ---- plain values ------------------------------------------------------ */

/* A dense, row-major (contiguous) tensor in caller- or rlx-owned memory. */
typedef struct rlx_tensor_view {
  void *data;
  rlx_dtype dtype;
  int32_t rank;
  int64_t dims[RLX_MAX_RANK];
} rlx_tensor_view;

/* Elements in a view (product of dims; 1 for rank 0); -1 when the view is
 * not valid (rank outside 0..RLX_MAX_RANK, a negative dim, or overflow). */
RLX_API int64_t rlx_view_numel(const rlx_tensor_view *v);

/* Description of a model input or output. Strings live as long as the
 * model. A model exported with dynamic axes has symbolic dims: for those,
 * dim_names[d] is the symbol or expression ("seq", "2*seq") and the axis
 * takes any size in [dim_min[d], dim_max[d]] that the model's other inputs
 * and relations allow; dims[d] is the example size it was exported with. A
 * static axis has dim_names[d] NULL and dim_min = dim_max = dims. */
typedef struct rlx_io_info {
  const char *name;
  rlx_dtype dtype;
  int32_t rank;
  int64_t dims[RLX_MAX_RANK];
  const char *dim_names[RLX_MAX_RANK];
  int64_t dim_min[RLX_MAX_RANK], dim_max[RLX_MAX_RANK];
} rlx_io_info;

/* A shape symbol of a dynamic model: a size its inputs choose at run time. */
typedef struct rlx_symbol_info {
  const char *name;
  int64_t min, max; /* inclusive bounds */
  int64_t hint;     /* the size the model was exported with */
} rlx_symbol_info;

/* ---- model ------------------------------------------------------------- */

typedef struct rlx_model rlx_model;

typedef struct rlx_load_options {
  size_t size;      /* sizeof(rlx_load_options); lets the struct grow */
  int verbose;      /* nonzero: progress on stderr */
  int copy_weights; /* nonzero: read weights.safetensors into memory instead of mapping it */
} rlx_load_options;

/* Loads an export directory (torch-ir.json + weights.safetensors): parses and
 * validates both files, lowers every aten node onto rlx ops, infers shapes and
 * dtypes and checks them against the recorded ones, and verifies the graph.
 * `opts` may be NULL. Unsupported ops are all reported in one error.
 * Errors: RLX_ERR_IO, RLX_ERR_FORMAT, RLX_ERR_UNSUPPORTED, RLX_ERR_SHAPE,
 * RLX_ERR_NOT_FOUND (missing weight), RLX_ERR_OUT_OF_MEMORY.
 *
 * Files: only regular files are read (a FIFO, device or directory in their
 * place is an RLX_ERR_IO); torch-ir.json may be at most 256 MiB.
 * Weights are mapped from weights.safetensors (copy_weights: read into
 * memory). Contract for mapped weights: the file must not be truncated or
 * rewritten while the model is alive. rlx checks its size at every session
 * creation and run and fails with RLX_ERR_IO if it shrank; truncation during
 * a run cannot be caught and raises SIGBUS, and bytes rewritten in place
 * change the weights. Load with copy_weights when the file may change. */
RLX_API rlx_status rlx_model_load(const char *dir, const rlx_load_options *opts,
                                  rlx_model **model_out);
RLX_API void rlx_model_destroy(rlx_model *model);

RLX_API int rlx_model_input_count(const rlx_model *model);
RLX_API int rlx_model_output_count(const rlx_model *model);
/* Fills *info_out for input/output `index`; RLX_ERR_INVALID_ARGUMENT if out of range. */
RLX_API rlx_status rlx_model_input_info(const rlx_model *model, int index, rlx_io_info *info_out);
RLX_API rlx_status rlx_model_output_info(const rlx_model *model, int index, rlx_io_info *info_out);
/* Session state: buffers the program updates in place, as torch.export
 * records a mutated buffer (a KV cache, a step counter). Each session owns
 * its own copy, which starts at the exported initial value, and every run
 * reads it and leaves the program's update in it (no whole copy where the
 * update is a scatter into it). Not inputs or outputs: count and describe
 * them here, read or write them with rlx_session_state. */
RLX_API int rlx_model_state_count(const rlx_model *model);
RLX_API rlx_status rlx_model_state_info(const rlx_model *model, int index, rlx_io_info *info_out);
/* The model's shape symbols (0 for a static model). */
RLX_API int rlx_model_symbol_count(const rlx_model *model);
RLX_API rlx_status rlx_model_symbol_info(const rlx_model *model, int index,
                                         rlx_symbol_info *info_out);

/* ---- compile ----------------------------------------------------------- */

typedef struct rlx_compiled rlx_compiled;

typedef enum rlx_device { RLX_DEVICE_CPU = 0, RLX_DEVICE_CUDA = 1 } rlx_device;

/* Most threads a session's pool runs (rlx_compile_options.threads). */
#define RLX_MAX_THREADS 256

typedef struct rlx_compile_options {
  size_t size;            /* sizeof(rlx_compile_options) */
  rlx_device device;      /* RLX_DEVICE_CPU */
  int threads;            /* 1..RLX_MAX_THREADS, or 0: one per core (at most RLX_MAX_THREADS) */
  int reference_kernels;  /* nonzero: plain reference kernels only */
  int no_passes;          /* nonzero: skip folding and other graph passes */
  size_t max_memory;      /* 0: no limit; else the most bytes a session's arena may take (a bound
                             for untrusted models: compile fails with RLX_ERR_OUT_OF_MEMORY
                             naming the largest value when the plan needs more) */
} rlx_compile_options;

/* Fills *opts with the defaults (size set, CPU, all cores, passes on). */
RLX_API void rlx_compile_options_init(rlx_compile_options *opts);

/* Compiles a copy of the model's graph. The model must outlive the result
 * (weights stay mapped from its files). `opts` may be NULL. */
RLX_API rlx_status rlx_model_compile(const rlx_model *model, const rlx_compile_options *opts,
                                     rlx_compiled **compiled_out);
RLX_API void rlx_compiled_destroy(rlx_compiled *compiled);

/* ---- session ----------------------------------------------------------- */

typedef struct rlx_session rlx_session;

/* Creates a session. Its memory (one arena) is allocated here, once, for
 * the largest binding of the model's symbols the bounds allow (a dynamic
 * model; large arenas are reserved address space that fills as bindings use
 * it); nothing the session does later allocates. The compiled model must
 * outlive the session. */
RLX_API rlx_status rlx_session_create(const rlx_compiled *compiled, rlx_session **session_out);
RLX_API void rlx_session_destroy(rlx_session *session);

/* Binds input `name` to caller memory, read (not copied) during each run.
 * The view's dtype and rank must be the input's; its dims must be the
 * input's for a static model, and any allowed binding of the symbols for a
 * dynamic one (checked at the next reshape or run). The memory must stay
 * valid until it is rebound or the session is destroyed. */
RLX_API rlx_status rlx_session_bind_input(rlx_session *session, const char *name,
                                          const rlx_tensor_view *view);

/* The reshape stage: resolves the symbols from the shapes of the bound
 * inputs, checks their bounds and the model's relations, and plans this
 * binding (shapes, kernels, memory); plans of recent bindings are cached.
 * rlx_session_run does it when the input shapes changed; call it directly to
 * check a binding or to read the output shapes before running. Errors:
 * RLX_ERR_SHAPE naming the input, the axis, the symbol and its bounds, or
 * the relation that fails (the session stays usable); RLX_ERR_INVALID_ARGUMENT
 * (an unbound input). Allocates nothing. */
RLX_API rlx_status rlx_session_reshape(rlx_session *session);

/* Binds output `name` ("0", "1", ... or the graph value name) to caller
 * memory; each run copies the output there (its dims must be the output's
 * at the binding that runs, else the run fails with RLX_ERR_SHAPE).
 * Optional: see rlx_session_output. */
RLX_API rlx_status rlx_session_bind_output(rlx_session *session, const char *name,
                                           const rlx_tensor_view *view);

/* Runs the graph (reshaping first when the input shapes changed). Every
 * input must be bound. Allocates nothing.
 * Errors: RLX_ERR_INVALID_ARGUMENT (unbound input), RLX_ERR_SHAPE (see
 * rlx_session_reshape), RLX_ERR_RUNTIME (a kernel rejected its data; the
 * message names the node). */
RLX_API rlx_status rlx_session_run(rlx_session *session);

/* Puts every state of the session back at its initial value (a new
 * conversation). */
RLX_API rlx_status rlx_session_reset_state(rlx_session *session);

/* State `index` as a view of the session's own memory, valid as long as
 * the session: read it, or write it between runs (restore a saved cache). */
RLX_API rlx_status rlx_session_state(rlx_session *session, int index, rlx_tensor_view *view_out);

/* Output `index` as a view into session memory with its shape at the current
 * binding (after a run: that run's output), valid until the next run or
 * reshape or the session's destruction. */
RLX_API rlx_status rlx_session_output(const rlx_session *session, int index,
                                      rlx_tensor_view *view_out);

/* ---- text generation -------------------------------------------------- */

/* A generator runs a causal LM exported with `python3 -m rlx.export_llm`
 * (docs/design.md, "Text generation"): one session of the compiled model,
 * whose state is the KV cache, and the token history. Feeding tokens runs one
 * step over them at the current position (the prompt at once, then one token
 * a step); the logits of the last token fed are then available to sample
 * from. A generator belongs to one thread at a time; two generators of one
 * compiled model generate independently. */
typedef struct rlx_generator rlx_generator;

/* The sampling chain, applied in this order to the last logits:
 * repetition penalty (over every token fed so far), temperature, top-k,
 * top-p, min-p, then a draw from what is left with the generator's random
 * stream. temperature 0 is greedy (argmax, lowest id on a tie; the
 * repetition penalty still applies). */
typedef struct rlx_sampling {
  size_t size;              /* sizeof(rlx_sampling) */
  float temperature;        /* 0: greedy */
  int32_t top_k;            /* 0: off */
  float top_p;              /* 1: off */
  float min_p;              /* 0: off */
  float repetition_penalty; /* 1: off (transformers' rule: logit > 0 ? logit / p : logit * p) */
  uint64_t seed;            /* the random stream's seed (rlx_generator_seed) */
} rlx_sampling;

/* Greedy: temperature 0, every filter off, seed 0. */
RLX_API void rlx_sampling_init(rlx_sampling *s);

/* Called with each generated token; returning nonzero stops generation. */
typedef int (*rlx_token_fn)(void *ctx, int32_t token);

typedef struct rlx_generate_options {
  size_t size;               /* sizeof(rlx_generate_options) */
  rlx_sampling sampling;
  int32_t max_new_tokens;    /* > 0 */
  const int32_t *stop_tokens; /* generation stops after emitting one of these */
  int32_t n_stop_tokens;
  rlx_token_fn on_token;     /* may be NULL */
  void *ctx;
} rlx_generate_options;

typedef struct rlx_generate_stats {
  int32_t n_prompt, n_generated;
  double prefill_ms, decode_ms; /* the prompt's step; every later step together */
  int stopped;                  /* 0: max_new_tokens, 1: a stop token, 2: the callback, 3: the context is full */
} rlx_generate_stats;

/* Options from the export's generation.json: its sampling defaults (greedy
 * unless it says do_sample), max_new_tokens, and its eos tokens as stop
 * tokens (the array lives as long as the generator). */
RLX_API rlx_status rlx_generator_defaults(const rlx_generator *gen, rlx_generate_options *opts_out);

/* Creates a generator over its own session of `compiled`, whose model must
 * be an rlx.export_llm export (its generation.json names the inputs and the
 * logits output). The compiled model must outlive the generator. */
RLX_API rlx_status rlx_generator_create(const rlx_compiled *compiled, rlx_generator **gen_out);
RLX_API void rlx_generator_destroy(rlx_generator *gen);

/* Runs one step over n tokens at the current position, which then moves
 * by n. Errors: RLX_ERR_INVALID_ARGUMENT (n < 1, a token outside the vocab),
 * RLX_ERR_SHAPE (the context would pass max_seq). */
RLX_API rlx_status rlx_generator_feed(rlx_generator *gen, const int32_t *tokens, int32_t n);

/* The logits of the last token fed (vocab_size floats, valid until the next
 * feed), or an error before the first feed. */
RLX_API rlx_status rlx_generator_logits(const rlx_generator *gen, const float **logits_out, int32_t *vocab_out);

/* Samples the next token from the last logits (does not feed it). */
RLX_API rlx_status rlx_generator_sample(rlx_generator *gen, const rlx_sampling *s, int32_t *token_out);

/* Restarts the random stream (rlx_generate does, from its options' seed). */
RLX_API void rlx_generator_seed(rlx_generator *gen, uint64_t seed);

/* The number of tokens in the context (the next token's position). */
RLX_API int64_t rlx_generator_position(const rlx_generator *gen);
/* The most tokens the context holds (the export's --max-seq). */
RLX_API int64_t rlx_generator_max_seq(const rlx_generator *gen);

/* Moves the position back to `pos` (0 <= pos <= position): the tokens after
 * it are forgotten (their cache rows are overwritten by later steps, and the
 * steps read only the first position + n rows). 0 starts a new context. */
RLX_API rlx_status rlx_generator_rewind(rlx_generator *gen, int64_t pos);

/* Feeds the prompt (n_prompt >= 1 tokens, after the current context), then
 * samples and feeds up to max_new_tokens tokens, calling on_token with
 * each; stops early on a stop token (emitted, not fed) or when the context
 * is full. stats may be NULL. */
RLX_API rlx_status rlx_generate(rlx_generator *gen, const int32_t *prompt, int32_t n_prompt,
                                const rlx_generate_options *opts, rlx_generate_stats *stats);

/* ---- tokenizer ---------------------------------------------------------- */

/* A text tokenizer read from a Hugging Face `tokenizer.json`: byte-level BPE
 * (GPT-2, Llama-3, Qwen2), SentencePiece-style BPE with byte fallback
 * (Llama-2, Mistral), WordPiece (BERT) and WordLevel, with their
 * normalizers, pre-tokenizers, added and special tokens, post-processors and
 * decoders; ids match the `tokenizers` library's encode(...).ids. What the
 * file asks for and rlx does not implement (a component type, a field value)
 * fails to load with RLX_ERR_UNSUPPORTED naming its JSON path. The file's
 * `truncation` and `padding` settings are not applied: encode returns the
 * whole sequence. docs/design.md ("Tokenizer") lists what is supported.
 *
 * Text is UTF-8. A tokenizer is immutable after loading and may be shared
 * by threads; a token stream belongs to one thread at a time. */
typedef struct rlx_tokenizer rlx_tokenizer;
typedef struct rlx_token_stream rlx_token_stream;

/* Loads `path` (RLX_ERR_IO, RLX_ERR_FORMAT naming the JSON path of a
 * malformed field, RLX_ERR_UNSUPPORTED). */
RLX_API rlx_status rlx_tokenizer_load(const char *path, rlx_tokenizer **tok_out);
RLX_API void rlx_tokenizer_destroy(rlx_tokenizer *tok);

/* Encodes text[0..len) (valid UTF-8 of at most 256 MiB, else
 * RLX_ERR_INVALID_ARGUMENT naming the byte offset). With add_special, the post-processor's tokens are added
 * (BOS for Llama, [CLS] ... [SEP] for BERT). Writes the first min(n, cap)
 * ids to ids and the count n to *n_out, so a call with cap 0 (ids may be
 * NULL) sizes the buffer, as snprintf. */
RLX_API rlx_status rlx_tokenizer_encode(const rlx_tokenizer *tok, const char *text, size_t len,
                                        int add_special, int32_t *ids, size_t cap, size_t *n_out);

/* Decodes ids[0..n) to UTF-8 (invalid byte sequences become U+FFFD as in
 * `tokenizers`); with skip_special, special tokens are left out. Writes at
 * most cap - 1 bytes and a NUL to text (when cap > 0) and the full length to
 * *len_out, as snprintf. An id outside the vocabulary is
 * RLX_ERR_INVALID_ARGUMENT. */
RLX_API rlx_status rlx_tokenizer_decode(const rlx_tokenizer *tok, const int32_t *ids, size_t n,
                                        int skip_special, char *text, size_t cap, size_t *len_out);

/* Ids are 0 .. vocab_size - 1 (gaps possible); this counts the added tokens. */
RLX_API int32_t rlx_tokenizer_vocab_size(const rlx_tokenizer *tok);
/* The id of a token string, e.g. "<|endoftext|>" (RLX_ERR_NOT_FOUND). */
RLX_API rlx_status rlx_tokenizer_token_id(const rlx_tokenizer *tok, const char *token,
                                          int32_t *id_out);
/* The token string of an id (owned by the tokenizer), or NULL. */
RLX_API const char *rlx_tokenizer_id_to_token(const rlx_tokenizer *tok, int32_t id);
/* Whether an id is a special added token. */
RLX_API int rlx_tokenizer_is_special(const rlx_tokenizer *tok, int32_t id);

/* A streaming decoder: push one id at a time, get the text it completes.
 * Only complete UTF-8 comes out; the bytes of a character split across
 * tokens (byte-level or <0xNN> byte-fallback tokens) are held back until it
 * completes, and invalid sequences come out as U+FFFD. The concatenation of
 * every push and the final flush equals rlx_tokenizer_decode of the same
 * ids wherever the decoded bytes are valid UTF-8 (an invalid run of <0xNN>
 * tokens streams as one U+FFFD per maximal invalid subpart, where the full
 * decode gives one per byte). The stream borrows tok, which must outlive it. */
RLX_API rlx_status rlx_token_stream_create(const rlx_tokenizer *tok, int skip_special,
                                           rlx_token_stream **stream_out);
/* *text_out (NUL-terminated, *len_out bytes, which may be 0) stays valid
 * until the next call on the stream. */
RLX_API rlx_status rlx_token_stream_push(rlx_token_stream *stream, int32_t id,
                                         const char **text_out, size_t *len_out);
/* Ends the text: what is held back comes out (as U+FFFD) and the stream
 * starts afresh. */
RLX_API rlx_status rlx_token_stream_flush(rlx_token_stream *stream, const char **text_out,
                                          size_t *len_out);
RLX_API void rlx_token_stream_destroy(rlx_token_stream *stream);

#ifdef __cplusplus
}
#endif

#endif /* RLX_H */
