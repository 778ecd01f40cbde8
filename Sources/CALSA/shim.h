#ifndef KIOSKCAM_CALSA_SHIM_H
#define KIOSKCAM_CALSA_SHIM_H
// libasound (alsa-lib 1.2): capture for a movie's sound. Only the Sound adapter imports it. The headers
// import as they are; their *_alloca macros do not reach Swift, so the adapter uses the *_malloc forms.
#include <alsa/asoundlib.h>
#endif
