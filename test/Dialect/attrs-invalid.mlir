// RUN: v4f-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{gemm_tiling: lanes must be 4, 8 or 16, got 5}}
func.func @lanes() attributes {t = #v4f.gemm_tiling<mr = 6, nr = 10, lanes = 5, mb = 48, nb = 250, kc = 256>} { return }

// -----

// expected-error @+1 {{gemm_tiling: the register tile 6x12 must have 1-16 rows and 1-4 vectors of 8 lanes}}
func.func @partial_vector() attributes {t = #v4f.gemm_tiling<mr = 6, nr = 12, lanes = 8, mb = 48, nb = 240, kc = 256>} { return }

// -----

// expected-error @+1 {{gemm_tiling: the workgroup tile 50x256 must be a multiple of the register tile 6x16}}
func.func @workgroup() attributes {t = #v4f.gemm_tiling<mr = 6, nr = 16, lanes = 8, mb = 50, nb = 256, kc = 256>} { return }

// -----

// expected-error @+1 {{gemm_tiling: the K block must be at least 1, got 0}}
func.func @kblock() attributes {t = #v4f.gemm_tiling<mr = 6, nr = 16, lanes = 8, mb = 48, nb = 256, kc = 0>} { return }
