// A stand-in for an installed libnvidia-ml whose kernel driver is not loaded (a container with the
// library but no device): it exports the entry points ragmig requires and fails nvmlInit_v2 with
// NVML_ERROR_DRIVER_NOT_LOADED. It reports no GPU at all; it exists to test that failure path only.
extern "C" {

int nvmlInit_v2() { return 9; }  // NVML_ERROR_DRIVER_NOT_LOADED
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Uninitialized"; }
// Everything else answers NVML_ERROR_UNINITIALIZED, as the real library does before a successful init.
int nvmlDeviceGetCount_v2(unsigned int*) { return 1; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int, void**) { return 1; }
int nvmlDeviceGetName(void*, char*, unsigned int) { return 1; }
int nvmlDeviceGetUUID(void*, char*, unsigned int) { return 1; }
int nvmlDeviceGetMemoryInfo(void*, void*) { return 1; }
int nvmlDeviceGetUtilizationRates(void*, void*) { return 1; }

}
