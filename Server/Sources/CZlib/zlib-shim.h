// zlib (Debian's zlib1g-dev, which the Swift toolchain itself requires): inflate and deflate for the providers'
// compressed statements (Alipay's zip, WeChat Pay's gzip) and the sandboxes that write them.
#include <zlib.h>
