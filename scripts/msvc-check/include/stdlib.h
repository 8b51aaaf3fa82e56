/* Stand-in for the MSVC C runtime's header (see assert.h here). */
#include <stddef.h>
void abort(void);
