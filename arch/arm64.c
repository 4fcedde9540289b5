#include "arch.h"
