// Stub for the metal-cpp syntax check: IOSurface's opaque handle.
#pragma once
typedef struct __IOSurface* IOSurfaceRef;
