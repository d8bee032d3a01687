# gpusim fuzz harnesses: the seed inputs of each harness, as paths relative
# to the source tree (sourced by run-fuzz and regress.sh; run from there).
# Seeds are the examples and the test fixtures, good and bad, plus small
# samples under tests/fuzz/seeds/.
fuzz_seeds () {
  case "$1" in
    arch) ls arch/*.cfg examples/arch/*.cfg tests/data/arch/*.cfg \
             tests/bad-input/arch/*.cfg tests/bad-input/arch-run/*.cfg ;;
    workload) ls examples/*.workload examples/labs/*/*.workload \
                 tests/data/workloads/*.workload \
                 tests/bad-input/workload/*.workload ;;
    hf-config) ls examples/configs/*.json tests/data/models/*.json \
                  data/neusight/models/*.json tests/bad-input/config/*.json ;;
    measure) ls tests/fuzz/seeds/measure/* tests/bad-input/measure/* ;;
    kineto) ls tests/data/kineto-small.json tests/bad-input/kineto/* ;;
    ops) ls tests/fuzz/seeds/ops/* tests/bad-input/ops/*.csv ;;
    *) echo "fuzz_seeds: unknown harness $1" >&2; return 1 ;;
  esac 2>/dev/null
}

# Inputs that once made a harness fail, kept as regression tests.
fuzz_regressions () {
  ls "tests/fuzz/regress/$1"/* 2>/dev/null
}
