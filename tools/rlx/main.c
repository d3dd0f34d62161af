/*
 * main.c — the `rlx` command-line tool: dispatches to the subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "rlx %d.%d.%d — run and verify PyTorch programs exported with `python3 -m rlx.export`\n\n"
          "usage:\n"
          "  rlx verify DIR [--threads N] [--reference-kernels] [--localize] [--atol X] [--rtol X]\n"
          "                 [--cosine X] [--no-arbiter] [--json FILE] [--repeat N]  run on the reference inputs,\n"
          "                 compare with PyTorch; --localize names the node where they diverge (needs\n"
          "                 --intermediates); a tolerance failure is arbitrated by the exporter's float64 run\n"
          "                 (out64::i) unless --no-arbiter\n"
          "  rlx run DIR [--input NAME=FILE.npy]... [--output-dir D]   run, write outputs as .npy\n"
          "  rlx bench DIR [--iters N] [--warmup N] [--threads N] [--profile] [--top N]   latency percentiles; per-node times (the N slowest)\n"
          "                [--shape NAME=AxB]... [--binding 'NAME=AxB,NAME=C']...   at other shapes (dynamic\n"
          "                 models; several --binding alternate)\n"
          "  rlx inspect DIR [--check] [--dot FILE]      op histogram and per-node table\n"
          "  rlx tokenize TOKENIZER.json (--text T | --file F) [--no-special] [--decode 1,2,3]   encode / decode text\n"
          "  rlx ops                                     the ops rlx lowers (aten, library custom ops)\n"
          "  rlx generate DIR (--prompt TEXT | --prompt-ids 1,2,3) [--max-new-tokens N] [--temperature T]\n"
          "               [--top-k K] [--top-p P] [--min-p P] [--repetition-penalty R] [--seed S] [--no-stop]\n"
          "               text generation with an export of `python3 -m rlx.export_llm` (greedy unless a\n"
          "               sampling option is given); prints the ids on a line starting 'ids:' and tok/s\n\n"
          "verify, run and bench also take --reference-kernels, --no-passes, --device cpu and\n"
          "--max-memory MB (refuse a model whose session arena would be larger: untrusted models)\n\n"
          "exit status: 0 success / parity PASS, 1 parity FAIL, 2 error\n",
          RLX_VERSION_MAJOR, RLX_VERSION_MINOR, RLX_VERSION_PATCH);
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--version")) {
    printf("rlx %d.%d.%d\n", RLX_VERSION_MAJOR, RLX_VERSION_MINOR, RLX_VERSION_PATCH);
    return 0;
  }
  if (!strcmp(cmd, "verify")) return cmd_verify(argc - 2, argv + 2);
  if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
  if (!strcmp(cmd, "inspect")) return cmd_inspect(argc - 2, argv + 2);
  if (!strcmp(cmd, "ops")) return cmd_ops(argc - 2, argv + 2);
  if (!strcmp(cmd, "generate")) return cmd_generate(argc - 2, argv + 2);
  if (!strcmp(cmd, "tokenize")) return cmd_tokenize(argc - 2, argv + 2);
  fprintf(stderr, "rlx: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return 2;
}
