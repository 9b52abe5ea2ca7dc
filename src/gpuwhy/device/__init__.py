"""Everything that reads the GPU through NVML and the CUDA driver (the only CUDA/NVML users besides engine/)."""
