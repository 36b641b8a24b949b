// Restore a path with the official client: `node restore.mjs <path> <primaryKey> [restoreKey...]`
//
// Prints one JSON line last on stdout: {"op":"restore","matchedKey":<string or null>,
// "cacheHit":<bool>} where cacheHit is what actions/cache would output as `cache-hit` (the
// matched key equals the primary key, compared case-insensitively). A thrown error (only a
// ValidationError) gives {"op":"restore","error":"..."} and exit code 1.
// The cache environment (ACTIONS_*, GITHUB_WORKSPACE, RUNNER_TEMP, PATH) comes from the caller.

const cache = await import(new URL('./node_modules/@actions/cache/lib/cache.js', import.meta.url));

const [path, primaryKey, ...restoreKeys] = process.argv.slice(2);
if (!path || !primaryKey) {
  console.error('usage: node restore.mjs <path> <primaryKey> [restoreKey...]');
  process.exit(2);
}
try {
  const matchedKey = (await cache.restoreCache([path], primaryKey, restoreKeys)) ?? null;
  // actions/cache src/utils/actionUtils.ts isExactKeyMatch: localeCompare, sensitivity "accent".
  const cacheHit =
    matchedKey !== null &&
    matchedKey.localeCompare(primaryKey, undefined, { sensitivity: 'accent' }) === 0;
  console.log(JSON.stringify({ op: 'restore', primaryKey, matchedKey, cacheHit }));
} catch (error) {
  console.log(JSON.stringify({ op: 'restore', primaryKey, error: String(error?.message ?? error) }));
  process.exitCode = 1;
}
