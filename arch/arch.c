#include "arch.h"

#include <stddef.h>

static const struct arch_ops *const arch_table[] = {
	&arch_x86_64,
	&arch_arm64,
};

const struct arch_ops *arch_lookup(uint16_t e_machine)
{
	for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
		if (arch_table[i]->e_machine == e_machine)
			return arch_table[i];
	return NULL;
}
