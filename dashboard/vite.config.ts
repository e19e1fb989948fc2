// The dashboard's build: hashed assets into the Python package, which serves them.
//
// base "./": every URL the build writes is relative (index.html's to its <base>, which
// the server sets to the request's stage path, e.g. /prod/; chunks to the chunk that
// imports them), so one build works at / on `memvault serve` and under any API Gateway
// stage without rebuilding.
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../layers/core/memvault/dashboard/static",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // The budget is 300 KB of compressed script for the vault page; warn well before.
    chunkSizeWarningLimit: 600,
    modulePreload: { polyfill: false },
  },
});
