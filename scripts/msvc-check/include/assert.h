/* Stand-in for the MSVC C runtime's header, for `cargo check` of the MSVC
   target on Linux: C that build scripts compile (ring) is checked, never
   linked, so declarations are all it needs. */
#define assert(x) ((void)0)
