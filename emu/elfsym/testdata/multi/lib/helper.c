#include "twice.h"

int helper(int x)
{
	return twice(x) + 1;
}
