#!/usr/bin/env node
// The package's CLI. Node 24+ runs the TypeScript sources directly (type stripping), so there is no build step.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  console.error(
    `safehold needs Node.js 24 or later (this is ${process.version}). Run it through npm (npm start, npx safehold), ` +
      'which uses the Node pinned in node_modules/.bin.',
  );
  process.exit(1);
}
const { main } = await import('../src/main.ts');
await main(process.argv.slice(2));
