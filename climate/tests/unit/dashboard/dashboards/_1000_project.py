DASHBOARD = 'project'
DEFAULT = True
ADD_INSTALLED_APPS = ['openstack_dashboard.dashboards.project']
