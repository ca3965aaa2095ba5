"""Fourier transforms: DFT, IDFT, RDFT, IRDFT, STFT."""
