# shellcheck shell=bash disable=SC2034
# gpio-sim and the irq_sim helper it needs, as one module named as the kernel's own (Debian builds neither).
module=gpio-sim
sources="drivers/gpio/gpio-sim.c drivers/gpio/gpiolib.h kernel/irq/irq_sim.c"
objects="gpio-sim-core.o irq_sim.o"

patch_sources() {
    # A module of several objects cannot share its name with one of them.
    mv gpio-sim.c gpio-sim-core.c
    # irq_to_desc() is not exported to modules; generic_handle_irq() does the same here.
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' irq_sim.c
    grep -q 'generic_handle_irq(irqnum);' irq_sim.c \
        || die "irq_sim.c did not take the generic_handle_irq patch (kernel source changed?)"
}
