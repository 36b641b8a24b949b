// Save a path with the official client: `node save.mjs <path> <key>`
//
// Prints one JSON line last on stdout: {"op":"save","key":...,"cacheId":<number>} or, when the
// client threw (only a ValidationError does), {"op":"save","key":...,"error":"..."} with exit
// code 1. Everything the client logs (workflow commands, tar) comes before that line.
// The cache environment (ACTIONS_*, GITHUB_WORKSPACE, RUNNER_TEMP, PATH) comes from the caller.

const cache = await import(new URL('./node_modules/@actions/cache/lib/cache.js', import.meta.url));

const [path, key] = process.argv.slice(2);
if (!path || !key) {
  console.error('usage: node save.mjs <path> <key>');
  process.exit(2);
}
try {
  const cacheId = await cache.saveCache([path], key);
  console.log(JSON.stringify({ op: 'save', key, cacheId }));
} catch (error) {
  console.log(JSON.stringify({ op: 'save', key, error: String(error?.message ?? error) }));
  process.exitCode = 1;
}
