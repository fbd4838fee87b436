#!/usr/bin/env bash
# dsh-fs/ai-sdk against the AI SDK's version 7. The dev dependency is `ai` 6, the last major that
# installs on Node 20 (7 declares node >=22), so `npm test` covers 6; this runs the adapter's type
# checks and tests on a copy of the checkout whose node_modules has `ai` 7 in its place (the
# checkout's own packages otherwise, linked). npm prints EBADENGINE for 7 on Node 20; the SDK's
# code runs there all the same. AI_SDK_7=VERSION picks another 7.x.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/dsh-fs-ai-sdk-7.XXXXXX")"
trap 'rm -rf "$work"' EXIT
version="${AI_SDK_7:-7.0.185}"

echo "ai-sdk-7-check: installing ai@$version"
mkdir "$work/v7"
(cd "$work/v7" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund --prefer-offline "ai@$version" zod@4)

# A copy, not links: Node resolves a linked file's imports from its real place, the checkout.
app="$work/app"
mkdir -p "$app/node_modules"
cp -r "$repo/src" "$repo/test" "$repo/package.json" "$repo/tsconfig.json" "$repo/vitest.config.ts" "$app/"
for entry in "$repo"/node_modules/* "$repo"/node_modules/.bin; do
  case "$(basename "$entry")" in ai | @ai-sdk) ;; *) ln -s "$entry" "$app/node_modules/" ;; esac
done
ln -s "$work/v7/node_modules/ai" "$app/node_modules/ai"
files=(test/adapters/ai-sdk.test.ts test/tools/read-image.test.ts)

cat >"$app/tsconfig.check.json" <<JSON
{ "extends": "./tsconfig.json", "include": ["src/adapters", "test/types/sdk-fit.ts", "${files[0]}", "${files[1]}"] }
JSON
cd "$app"
echo "ai-sdk-7-check: type-checking with $(node -p "require('ai/package.json').version")"
npx tsc --noEmit -p tsconfig.check.json
echo "ai-sdk-7-check: testing"
npx vitest run "${files[@]}"
echo "ai-sdk-7-check: ok with ai@$version"
