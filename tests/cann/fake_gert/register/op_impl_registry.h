// fake: see af_fake_gert.h
#include "af_fake_gert.h"
