#include "arch.h"

#include <elf.h>

const struct arch_ops arch_x86_64 = {
	.name = "x86_64",
	.e_machine = EM_X86_64,
	.page_size = 4096,
};
