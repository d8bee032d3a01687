#!/bin/sh
# gpusim tests: a WORKLOAD named as Hugging Face tools name a model: a
# directory holding config.json, or a model id found in the local hub
# cache ($HF_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub).
cd "$GS_SRCDIR" || exit 1
J="$GS_BUILDDIR/tests/jsonq"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset HF_HUB_CACHE HF_HOME XDG_CACHE_HOME
echo "1..10"
cfg=tests/data/models/tiny-opt.json
run() { "$GPUSIM" run "$@" --arch h100 --batch 2 --seq 16 --format json; }
"$GPUSIM" run "$cfg" --arch h100 --batch 2 --seq 16 --format json > "$tmp/ref.json"
want=$("$J" "$tmp/ref.json" total_ms)

# A directory saved by save_pretrained: its config.json, the run named as
# given.
mkdir -p "$tmp/saved"
cp "$cfg" "$tmp/saved/config.json"
if run "$tmp/saved" > "$tmp/d.json" 2> "$tmp/d.err" &&
   [ "$("$J" "$tmp/d.json" total_ms)" = "$want" ] &&
   [ "$("$J" "$tmp/d.json" workload)" = "$tmp/saved" ]; then
  echo "ok 1 a directory runs its config.json"
else
  echo "not ok 1 directory"; sed 's/^/# /' "$tmp/d.err"
fi

# A directory without one: exit 3, saying so.
mkdir -p "$tmp/empty"
run "$tmp/empty" > /dev/null 2> "$tmp/e.err"; rc=$?
if [ $rc -eq 3 ] && grep -q "empty: a directory without config.json" "$tmp/e.err"; then
  echo "ok 2 a directory without config.json is refused"
else
  echo "not ok 2 rc $rc"; sed 's/^/# /' "$tmp/e.err"
fi

# The hub cache as huggingface_hub lays it out: refs/main names the
# snapshot, whose config.json links to a blob.
repo="$tmp/cache/hub/models--acme--tiny-opt"
mkdir -p "$repo/refs" "$repo/blobs" "$repo/snapshots/0123abc" "$repo/snapshots/4567def"
cp "$cfg" "$repo/blobs/b1"
ln -s ../../blobs/b1 "$repo/snapshots/0123abc/config.json"
sed 's/"num_hidden_layers": *[0-9]*/"num_hidden_layers": 1/' "$cfg" > "$repo/snapshots/4567def/config.json"
printf '0123abc\n' > "$repo/refs/main"
if HF_HOME="$tmp/cache" run acme/tiny-opt > "$tmp/h.json" 2> "$tmp/h.err" &&
   [ "$("$J" "$tmp/h.json" total_ms)" = "$want" ] &&
   [ "$("$J" "$tmp/h.json" workload)" = acme/tiny-opt ]; then
  echo "ok 3 a cached model id under HF_HOME"
else
  echo "not ok 3 HF_HOME"; sed 's/^/# /' "$tmp/h.err"
fi
mkdir -p "$tmp/xdg/huggingface"
ln -s "$tmp/cache/hub" "$tmp/xdg/huggingface/hub"
if HF_HUB_CACHE="$tmp/cache/hub" HF_HOME=/nonexistent run acme/tiny-opt > "$tmp/h2.json" 2> "$tmp/h2.err" &&
   [ "$("$J" "$tmp/h2.json" total_ms)" = "$want" ] &&
   XDG_CACHE_HOME="$tmp/xdg" run acme/tiny-opt > "$tmp/h3.json" 2>> "$tmp/h2.err" &&
   [ "$("$J" "$tmp/h3.json" total_ms)" = "$want" ] &&
   ! HF_HOME=/nonexistent XDG_CACHE_HOME="$tmp/xdg" run acme/tiny-opt > /dev/null 2>&1; then
  echo "ok 4 HF_HUB_CACHE before HF_HOME before XDG_CACHE_HOME/huggingface/hub"
else
  echo "not ok 4 cache directory order"; sed 's/^/# /' "$tmp/h2.err"
fi

# A revision: another snapshot by its hash, a ref that is not cached.
if HF_HOME="$tmp/cache" run acme/tiny-opt@4567def > "$tmp/r.json" 2> "$tmp/r.err" &&
   [ "$("$J" "$tmp/r.json" total_ms)" != "$want" ]; then
  echo "ok 5 id@commit picks that snapshot"
else
  echo "not ok 5 revision"; sed 's/^/# /' "$tmp/r.err"
fi
HF_HOME="$tmp/cache" run acme/tiny-opt@v2 > /dev/null 2> "$tmp/r2.err"; rc=$?
if [ $rc -eq 3 ] && grep -q "revision 'v2' of acme/tiny-opt is not in the Hugging Face cache" "$tmp/r2.err"; then
  echo "ok 6 an uncached revision is refused"
else
  echo "not ok 6 rc $rc"; sed 's/^/# /' "$tmp/r2.err"
fi

# An id the cache does not hold: no download, the remedy named.
HF_HOME="$tmp/cache" run acme/other > /dev/null 2> "$tmp/n.err"; rc=$?
if [ $rc -eq 3 ] && grep -q "acme/other: no such file, and model acme/other is not in the Hugging Face cache ($tmp/cache/hub/models--acme--other); gpusim does not download: fetch its config.json (huggingface-cli download acme/other config.json)" "$tmp/n.err"; then
  echo "ok 7 an uncached id names the cache and the remedy"
else
  echo "not ok 7 rc $rc"; sed 's/^/# /' "$tmp/n.err"
fi

# A snapshot without config.json.
rm "$repo/snapshots/0123abc/config.json"
HF_HOME="$tmp/cache" run acme/tiny-opt > /dev/null 2> "$tmp/c.err"; rc=$?
if [ $rc -eq 3 ] && grep -q "the cached snapshot of acme/tiny-opt has no config.json" "$tmp/c.err"; then
  echo "ok 8 a snapshot without config.json is refused"
else
  echo "not ok 8 rc $rc"; sed 's/^/# /' "$tmp/c.err"
fi
ln -s ../../blobs/b1 "$repo/snapshots/0123abc/config.json"

# A .workload's model.config may name a cached id or a directory.
printf 'model = { config = "acme/tiny-opt"; batch = 2; seq = 16; };\n' > "$tmp/id.workload"
printf 'model = { config = "saved"; batch = 2; seq = 16; };\n' > "$tmp/dir.workload"
if HF_HOME="$tmp/cache" "$GPUSIM" run "$tmp/id.workload" --arch h100 --format json > "$tmp/w1.json" 2> "$tmp/w.err" &&
   "$GPUSIM" run "$tmp/dir.workload" --arch h100 --format json > "$tmp/w2.json" 2>> "$tmp/w.err" &&
   [ "$("$J" "$tmp/w1.json" total_ms)" = "$want" ] && [ "$("$J" "$tmp/w2.json" total_ms)" = "$want" ]; then
  echo "ok 9 model.config names a cached id or a directory"
else
  echo "not ok 9 workload model.config"; sed 's/^/# /' "$tmp/w.err"
fi
printf 'model = {\n  config = "acme/other";\n};\n' > "$tmp/bad.workload"
HF_HOME="$tmp/cache" "$GPUSIM" run "$tmp/bad.workload" --arch h100 > /dev/null 2> "$tmp/wb.err"; rc=$?
if [ $rc -eq 3 ] && grep -q "bad.workload:2: model.config: acme/other: no such file, and model acme/other is not in the Hugging Face cache" "$tmp/wb.err"; then
  echo "ok 10 an uncached id in a workload names its file and line"
else
  echo "not ok 10 rc $rc"; sed 's/^/# /' "$tmp/wb.err"
fi
