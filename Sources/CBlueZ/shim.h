// libbluetooth's HCI headers, as the kernel and BlueZ define them.
// BeaconCapture imports this module `internal`, so no C type leaks out of it.
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <sys/ioctl.h>
#include <linux/rfkill.h>

// ioctl is variadic and its numbers are function-like macros (_IOW): Swift can call neither.
static inline int beacond_hci_device_up(int fd, int device) { return ioctl(fd, HCIDEVUP, device); }
static inline int beacond_hci_device_down(int fd, int device) { return ioctl(fd, HCIDEVDOWN, device); }
