#ifndef ORDERSAFE_FUZZER_DRIVER_H
#define ORDERSAFE_FUZZER_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (in the runtime -sanitize=fuzzer links): runs the fuzzing loop with `callback`, taking
/// libFuzzer's usual command-line options.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
