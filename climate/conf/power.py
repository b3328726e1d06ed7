"""Options of the power plan (``[power]``): which reservable hosts are
powered off while nobody has booked them, and when they are woken (the
rules are in ``climate.scheduling.power``).  The power backends' own
options (how a host is powered) are not here."""

from oslo_config import cfg

from climate.conf import groups

POWER_GROUP = 'power'

power_group = cfg.OptGroup(
    POWER_GROUP, title='Power plan: reservable hosts off while unbooked')

power_opts = [
    cfg.BoolOpt('enabled', default=False,
                help='Power off reservable hosts that Climate manages the '
                     'power of while nobody has booked them, and wake them '
                     'before their next booking starts. Off by default: '
                     'powering hosts off is the operator\'s decision (it '
                     'needs a power backend and hosts that boot '
                     'reliably). While off, hosts found powered off are '
                     'still woken when a booking needs them.'),
    cfg.IntOpt('min_off', default=7200, min=1,
               help='Seconds a host must be able to stay off, beyond the '
                    'time it takes to wake, for the plan to power it off. '
                    'Shorter gaps are left on: a boot costs energy and '
                    'wear, and an off host makes a lease that starts now '
                    'wait for its boot.'),
    cfg.IntOpt('wake_margin', default=300, min=0,
               help='Seconds added to a host\'s boot time to make its wake '
                    'lead, how long before its next booking it is woken: '
                    'boots vary, and a booking must find its host up.'),
    cfg.IntOpt('default_boot_time', default=600, min=0,
               help='Seconds a host is taken to need to boot until its '
                    'boot has been measured. Bare metal with long memory '
                    'checks takes 10 minutes or more: set it no lower than '
                    'the slowest host\'s boot.'),
    cfg.IntOpt('spare_awake', default=2, min=0,
               help='Free hosts kept awake, whatever spare_share says, so '
                    'that a lease that starts now does not wait for a '
                    'boot.'),
    cfg.FloatOpt('spare_share', default=0.05, min=0.0, max=1.0,
                 help='Share of the free hosts kept awake for leases that '
                      'start now (rounded up); the larger of this and '
                      'spare_awake holds. Raise it where many leases are '
                      'made for now.'),
    cfg.IntOpt('plan_interval', default=300, min=1,
               help='Seconds between two passes of the power planner at '
                    'most (a pass also runs when the plan next changes by '
                    'the clock alone: a host is due to wake). It bounds '
                    'how late a booking made less than a wake lead ahead '
                    'is seen, and how soon a boot is measured.'),
    cfg.IntOpt('wake_grace', default=300, min=0,
               help='Seconds after the booking start it was woken for '
                    'that a host may still be coming up. Past them, the '
                    'host is down for healing, as a failed host is: its '
                    'bookings move to another free host that fits, or '
                    'their leases are flagged degraded (missing '
                    'resources), until it is up again.'),
    cfg.FloatOpt('idle_watts', default=150.0, min=0.0,
                 help='Watts a reservable host draws when on and idle: '
                      'what each hour off saves, for the energy figures '
                      'Climate reports (measure a typical host at its '
                      'PDU).'),
]


def register_opts(conf):
    groups.register(conf, power_group, power_opts)


def list_opts():
    return [(POWER_GROUP, list(power_opts))]
