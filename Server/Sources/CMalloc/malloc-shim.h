// glibc's allocator tuning (mallopt), which Swift's Glibc module leaves out.
#if defined(__linux__)
#include <malloc.h>
#endif
