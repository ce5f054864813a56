/* Uses the installed libnpu from C through pkg-config (npu-emu.pc, which requires npu.pc):
 * open the default device ("emu:") and print two parameters.
 * Build: cc main.c $(pkg-config --cflags --static --libs npu-emu). */
#include <inttypes.h>
#include <stdio.h>

#include "npu/npu.h"
#include "npu_accel.h"

int main(void) {
  npu_device_t* dev = NULL;
  if (npu_device_open(NULL, &dev) != NPU_OK) {
    fprintf(stderr, "%s\n", npu_last_error());
    return 1;
  }
  uint64_t sram = 0, clock = 0;
  if (npu_device_get_param(dev, DRM_NPU_PARAM_SRAM_SIZE, &sram) != NPU_OK ||
      npu_device_get_param(dev, DRM_NPU_PARAM_CLOCK_HZ, &clock) != NPU_OK) {
    fprintf(stderr, "%s\n", npu_last_error());
    npu_device_close(dev);
    return 1;
  }
  npu_buffer_t* buf = NULL;
  if (npu_buffer_alloc(dev, 256, 0, 0, &buf) != NPU_OK) {
    fprintf(stderr, "%s\n", npu_last_error());
    npu_device_close(dev);
    return 1;
  }
  printf("c consumer: sram %" PRIu64 " bytes, clock %" PRIu64 " Hz, buffer at 0x%" PRIx64 "\n",
         sram, clock, npu_buffer_device_address(buf));
  npu_buffer_free(buf);
  npu_device_close(dev);
  return sram > 0 ? 0 : 1;
}
