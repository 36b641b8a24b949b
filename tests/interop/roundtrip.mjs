// Restore, then save under a new key, with the official client in one process (bench/cache.py):
// `node roundtrip.mjs <path> <saveKey> <primaryKey> [restoreKey...]`
//
// Prints one JSON line last on stdout: {"op":"roundtrip","matchedKey":<string or null>,
// "cacheId":<number>}, or {"op":"roundtrip","error":"..."} with exit code 1 when the client threw.
// The cache environment (ACTIONS_*, GITHUB_WORKSPACE, RUNNER_TEMP, PATH) comes from the caller.

const cache = await import(new URL('./node_modules/@actions/cache/lib/cache.js', import.meta.url));

const [path, saveKey, primaryKey, ...restoreKeys] = process.argv.slice(2);
if (!path || !saveKey || !primaryKey) {
  console.error('usage: node roundtrip.mjs <path> <saveKey> <primaryKey> [restoreKey...]');
  process.exit(2);
}
try {
  const matchedKey = (await cache.restoreCache([path], primaryKey, restoreKeys)) ?? null;
  const cacheId = await cache.saveCache([path], saveKey);
  console.log(JSON.stringify({ op: 'roundtrip', matchedKey, cacheId }));
} catch (error) {
  console.log(JSON.stringify({ op: 'roundtrip', error: String(error?.message ?? error) }));
  process.exitCode = 1;
}
