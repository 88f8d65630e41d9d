// The declaration in include/fuzzer_driver.h is all this target provides; the driver itself is libFuzzer's.
#include "fuzzer_driver.h"
