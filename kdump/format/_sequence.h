/* Shared by the C accelerators: DefaultRecordBatch.incrementSequence, as batch.increment_sequence
 * does it (int32 arithmetic that wraps to 0, not to a negative number). */
#ifndef KDUMP_SEQUENCE_H
#define KDUMP_SEQUENCE_H

#include <stdint.h>

static inline int64_t
kdump_increment_sequence(int64_t sequence, int64_t increment)
{
    if (sequence > 2147483647LL - increment)
        return increment - (2147483647LL - sequence) - 1;
    return sequence + increment;
}

#endif
