DASHBOARD = 'admin'
ADD_INSTALLED_APPS = ['openstack_dashboard.dashboards.admin']
