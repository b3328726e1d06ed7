from django.urls import re_path

from climate.dashboard.content.project_usage import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^(?P<project_id>[^/]+)/$', views.ProjectView.as_view(),
            name='project'),
]
