#!/usr/bin/env node
// The CLI entry point. In this repository Node 24 runs the TypeScript sources directly (type stripping);
// an installed package (under node_modules, where Node strips no types) runs the built JavaScript.
const installed = import.meta.url.includes('/node_modules/');
await import(installed ? '../dist/src/cli/main.js' : '../src/cli/main.ts');
